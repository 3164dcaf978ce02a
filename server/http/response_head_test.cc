#include "server/http/response_head.h"

#include <gtest/gtest.h>

#include "server/http/json_response.h"

namespace kiln::http::internal {
namespace {

TEST(ResponseHeadTest, SerializesStatusLengthAndTransportFields) {
  Response response = Response::Text(200, "hello", "text/plain");
  response.headers.Add("ETag", "\"abc\"");
  response.headers.Add("Content-Length", "999");         // the transport's field wins
  response.headers.Add("X-Evil", "a\r\nSet-Cookie: x");  // would split the response
  std::string head = SerializeHead(response, WireBody{response.body, false},
                                   HeadOptions{.keep_alive = false, .date = "Thu, 01 Jan 1970"});
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(head.ends_with("\r\n\r\n"));
  EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_EQ(head.find("999"), std::string::npos);
  EXPECT_EQ(head.find("X-Evil"), std::string::npos);
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(head.find("ETag: \"abc\"\r\n"), std::string::npos);
  EXPECT_NE(head.find("Date: Thu, 01 Jan 1970\r\n"), std::string::npos);
}

TEST(ResponseHeadTest, ZstdWireBodyAndNoBodyStatuses) {
  Response response = Response::Text(200, std::string(4000, 'x'));
  Bytes compressed = MakeBytes("12345678");
  std::string head = SerializeHead(response, WireBody{compressed, true}, {});
  EXPECT_NE(head.find("Content-Length: 8\r\n"), std::string::npos);
  EXPECT_NE(head.find("Content-Encoding: zstd\r\n"), std::string::npos);
  EXPECT_NE(head.find("Vary: Accept-Encoding\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Connection:"), std::string::npos);

  Response empty;
  empty.status = 204;
  std::string no_content = SerializeHead(empty, {}, {});
  EXPECT_TRUE(no_content.starts_with("HTTP/1.1 204 No Content\r\n"));
  EXPECT_EQ(no_content.find("Content-Length"), std::string::npos);

  std::string http10 =
      SerializeHead(ErrorResponse(NotFoundError("x")), {}, HeadOptions{.keep_alive = true, .http10 = true});
  EXPECT_NE(http10.find("Connection: keep-alive\r\n"), std::string::npos);
  EXPECT_NE(http10.find("Content-Length: 0\r\n"), std::string::npos);
}

TEST(ResponseHeadTest, HeadAnnouncesTheGivenLengthWithoutABody) {
  Response response;
  response.content_type = "application/vnd.kiln.executable";
  response.head_content_length = 262144;
  std::string head = SerializeHead(response, WireBody{}, HeadOptions{.head = true});
  EXPECT_NE(head.find("Content-Length: 262144\r\n"), std::string::npos) << head;
  // Not a HEAD: the announced length is always the body's.
  std::string get = SerializeHead(response, WireBody{}, HeadOptions{.head = false});
  EXPECT_NE(get.find("Content-Length: 0\r\n"), std::string::npos) << get;
}

TEST(ResponseHeadTest, AppendHeadBatchesHeadsInOneBuffer) {
  Response first = Response::Text(200, "a");
  Response second = Response::Text(404, "bc");
  std::string out;
  AppendHead(first, WireBody{first.body, false}, {}, out);
  const size_t first_size = out.size();
  AppendHead(second, WireBody{second.body, false}, {}, out);
  EXPECT_EQ(out.substr(0, first_size), SerializeHead(first, WireBody{first.body, false}, {}));
  EXPECT_EQ(out.substr(first_size), SerializeHead(second, WireBody{second.body, false}, {}));
}

}  // namespace
}  // namespace kiln::http::internal
