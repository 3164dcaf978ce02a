// The server's protocol behaviour, through a real socket on 127.0.0.1.
#include "server/http/http_server.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/http/content_coding.h"
#include "server/http/json_response.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

std::string Compressible(size_t size) {
  std::string text;
  while (text.size() < size) text += "ROOT %add.1 = f32[1024]{0} add(%p0, %p1) ";
  text.resize(size);
  return text;
}

// GET /echo?text=..  (inline)      -> the text
// POST /body         (worker pool) -> the decoded request body
// GET /big?size=N    (worker pool) -> N compressible bytes
// GET /precompressed (inline)      -> a body with a precompressed variant
// POST /v1/executables/{key}/execute -> the captured key
// /echo declares its query (text) and execute its body type (JSON).
Router TestRouter() {
  Router router;
  EXPECT_TRUE(router.Add("GET", "/echo", SyncHandler([](const Request& request) {
                           return Response::Text(200,
                                                 std::string(request.Query("text").value_or("")));
                         }),
                         Execution::kInline));
  EXPECT_TRUE(router.Add("POST", "/body", SyncHandler([](const Request& request) {
                           return Response::Text(200, request.body, "application/octet-stream");
                         })));
  EXPECT_TRUE(router.Add("GET", "/big", SyncHandler([](const Request& request) {
                           size_t size =
                               std::stoul(std::string(request.Query("size").value_or("0")));
                           return Response::Text(200, Compressible(size));
                         })));
  EXPECT_TRUE(router.Add("GET", "/precompressed", SyncHandler([](const Request&) {
                           Response response = Response::Text(200, Compressible(10000));
                           response.zstd_body = MakeBytes(ZstdCompress(Compressible(10000), 5));
                           return response;
                         }),
                         Execution::kInline));
  EXPECT_TRUE(
      router.Add("POST", "/v1/executables/{key}/execute", SyncHandler([](const Request& request) {
                   return Response::Text(200, std::string(request.PathParam("key").value_or("?")));
                 })));
  EXPECT_TRUE(router.Declare("GET", "/echo", RequestContract{.query = {"text"}}));
  EXPECT_TRUE(router.Declare("POST", "/v1/executables/{key}/execute",
                             RequestContract{.body_types = {"application/json"}, .untyped_body = true}));
  return router;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartServer(testing::TestOptions(), TestRouter());
    ASSERT_NE(server_, nullptr);
  }
  RawHttpClient Connect() {
    Result<RawHttpClient> client = RawHttpClient::Connect(server_->port());
    EXPECT_TRUE(client) << client.error().message;
    return std::move(*client);
  }

  std::unique_ptr<HttpServer> server_;
};

nlohmann::json ErrorOf(const RawResponse& response) {
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/json");
  return nlohmann::json::parse(response.body)["error"];
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  RawHttpClient client = Connect();
  for (std::string text : {"one", "two", "three"}) {
    Result<RawResponse> response = client.RoundTrip(MakeRequest("GET", "/echo?text=" + text));
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, text);
    EXPECT_FALSE(response->headers.Has("Connection"));
    EXPECT_TRUE(response->headers.Has("Date"));
  }
}

TEST_F(HttpServerTest, DeclaredContractsAreEnforcedBeforeTheRouteRuns) {
  RawHttpClient client = Connect();
  Result<RawResponse> misspelt = client.RoundTrip(MakeRequest("GET", "/echo?txt=a"));
  ASSERT_TRUE(misspelt) << misspelt.error().message;
  EXPECT_EQ(misspelt->status, 400);
  EXPECT_EQ(ErrorOf(*misspelt)["code"], "invalid_query");
  EXPECT_EQ(ErrorOf(*misspelt)["message"],
            "unknown query parameter 'txt' for GET /echo (did you mean 'text'?); accepted: text");
  Result<RawResponse> twice = client.RoundTrip(MakeRequest("GET", "/echo?text=a&text=b"));
  ASSERT_TRUE(twice) << twice.error().message;
  EXPECT_EQ(twice->status, 400);
  Result<RawResponse> png = client.RoundTrip(MakeRequest(
      "POST", "/v1/executables/k/execute", "\x89PNG", "Content-Type: image/png\r\n"));
  ASSERT_TRUE(png) << png.error().message;
  EXPECT_EQ(png->status, 415);
  EXPECT_EQ(ErrorOf(*png)["code"], "unsupported_media_type");
  // The refusals are ordinary answers: the connection stays usable.
  Result<RawResponse> ok = client.RoundTrip(MakeRequest("POST", "/v1/executables/k/execute", "{}",
                                                        "Content-Type: application/json\r\n"));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "k");
  // Undeclared routes take anything.
  Result<RawResponse> big = client.RoundTrip(MakeRequest("GET", "/big?size=3&whatever=1"));
  ASSERT_TRUE(big) << big.error().message;
  EXPECT_EQ(big->status, 200);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  RawHttpClient client = Connect();
  // A slow worker request between fast inline ones: answers must not overtake.
  std::string requests = MakeRequest("GET", "/echo?text=a") +
                         MakeRequest("GET", "/big?size=300000") +
                         MakeRequest("GET", "/echo?text=b") + MakeRequest("POST", "/body", "c");
  ASSERT_TRUE(client.Send(requests));
  Result<RawResponse> a = client.ReadResponse();
  Result<RawResponse> big = client.ReadResponse();
  Result<RawResponse> b = client.ReadResponse();
  Result<RawResponse> c = client.ReadResponse();
  ASSERT_TRUE(a && big && b && c);
  EXPECT_EQ(a->body, "a");
  EXPECT_EQ(big->body, Compressible(300000));
  EXPECT_EQ(b->body, "b");
  EXPECT_EQ(c->body, "c");
}

TEST_F(HttpServerTest, ChunkedRequestBodyIsReassembled) {
  RawHttpClient client = Connect();
  Result<RawResponse> response = client.RoundTrip(
      "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n");
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello world");
}

TEST_F(HttpServerTest, ExpectContinueGets100ThenTheResponse) {
  RawHttpClient client = Connect();
  ASSERT_TRUE(client.Send(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n"));
  Result<RawResponse> interim = client.ReadResponse();
  ASSERT_TRUE(interim) << interim.error().message;
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.Send("payload"));
  Result<RawResponse> response = client.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "payload");
}

TEST_F(HttpServerTest, ZstdRequestBodyIsDecoded) {
  RawHttpClient client = Connect();
  std::string original = Compressible(50000);
  Result<RawResponse> response = client.RoundTrip(
      MakeRequest("POST", "/body", ZstdCompress(original, 3), "Content-Encoding: zstd\r\n"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, original);
}

TEST_F(HttpServerTest, BadContentEncodingsAreRefused) {
  RawHttpClient client = Connect();
  Result<RawResponse> corrupt = client.RoundTrip(
      MakeRequest("POST", "/body", "not zstd at all", "Content-Encoding: zstd\r\n"));
  ASSERT_TRUE(corrupt);
  EXPECT_EQ(corrupt->status, 400);
  EXPECT_EQ(ErrorOf(*corrupt)["code"], "bad_content_encoding");
  Result<RawResponse> gzip =
      client.RoundTrip(MakeRequest("POST", "/body", "x", "Content-Encoding: gzip\r\n"));
  ASSERT_TRUE(gzip);
  EXPECT_EQ(gzip->status, 415);
}

TEST_F(HttpServerTest, ZstdResponseOnlyWhenAccepted) {
  RawHttpClient client = Connect();
  std::string expected = Compressible(65536);
  Result<RawResponse> zstd = client.RoundTrip(
      MakeRequest("GET", "/big?size=65536", {}, "Accept-Encoding: gzip, zstd\r\n"));
  ASSERT_TRUE(zstd) << zstd.error().message;
  EXPECT_EQ(zstd->headers.Get("Content-Encoding"), "zstd");
  EXPECT_LT(zstd->body.size(), expected.size() / 4);
  EXPECT_EQ(ZstdDecompress(zstd->body, 1 << 20).value(), expected);

  Result<RawResponse> plain = client.RoundTrip(MakeRequest("GET", "/big?size=65536"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->headers.Has("Content-Encoding"));
  EXPECT_EQ(plain->body, expected);

  Result<RawResponse> refused =
      client.RoundTrip(MakeRequest("GET", "/big?size=65536", {}, "Accept-Encoding: zstd;q=0\r\n"));
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->headers.Has("Content-Encoding"));

  Result<RawResponse> small =
      client.RoundTrip(MakeRequest("GET", "/big?size=100", {}, "Accept-Encoding: zstd\r\n"));
  ASSERT_TRUE(small);
  EXPECT_FALSE(small->headers.Has("Content-Encoding"));
  EXPECT_EQ(small->body.size(), 100u);
}

TEST_F(HttpServerTest, PrecompressedBodyIsSentAsIs) {
  RawHttpClient client = Connect();
  Result<RawResponse> response =
      client.RoundTrip(MakeRequest("GET", "/precompressed", {}, "Accept-Encoding: zstd\r\n"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->headers.Get("Content-Encoding"), "zstd");
  EXPECT_EQ(response->body, ZstdCompress(Compressible(10000), 5));
}

TEST_F(HttpServerTest, UnknownRouteIs404AndWrongMethodIs405) {
  RawHttpClient client = Connect();
  Result<RawResponse> missing = client.RoundTrip(MakeRequest("GET", "/nope"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ErrorOf(*missing)["code"], "not_found");
  EXPECT_NE(ErrorOf(*missing)["message"].get<std::string>().find("/nope"), std::string::npos);

  Result<RawResponse> wrong = client.RoundTrip(MakeRequest("DELETE", "/echo"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->headers.Get("Allow"), "GET, HEAD");
  EXPECT_EQ(ErrorOf(*wrong)["code"], "method_not_allowed");

  // Errors keep the connection usable.
  Result<RawResponse> after = client.RoundTrip(MakeRequest("GET", "/echo?text=ok"));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->body, "ok");
}

TEST_F(HttpServerTest, HeadIsAnsweredWithoutABody) {
  RawHttpClient client = Connect();
  Result<RawResponse> head = client.RoundTrip(MakeRequest("HEAD", "/big?size=5000"), true);
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->headers.Get("Content-Length"), "5000");
  // Had body bytes followed the head, this response would be garbled.
  Result<RawResponse> next = client.RoundTrip(MakeRequest("GET", "/echo?text=after"));
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "after");
}

TEST_F(HttpServerTest, PathCapturesAndQueriesAreDecoded) {
  RawHttpClient client = Connect();
  Result<RawResponse> captured =
      client.RoundTrip(MakeRequest("POST", "/v1/executables/ab%2Fc%20d/execute", "x"));
  ASSERT_TRUE(captured);
  EXPECT_EQ(captured->body, "ab/c d");
  Result<RawResponse> query = client.RoundTrip(MakeRequest("GET", "/echo?text=a+b%26c"));
  ASSERT_TRUE(query);
  EXPECT_EQ(query->body, "a b&c");
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  RawHttpClient client = Connect();
  Result<RawResponse> response =
      client.RoundTrip(MakeRequest("GET", "/echo?text=bye", {}, "Connection: close\r\n"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "bye");
  EXPECT_EQ(response->headers.Get("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, Http10KeepAliveIsAnnounced) {
  RawHttpClient client = Connect();
  Result<RawResponse> response =
      client.RoundTrip("GET /echo?text=old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->headers.Get("Connection"), "keep-alive");
  Result<RawResponse> again = client.RoundTrip("GET /echo?text=x HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "x");
  EXPECT_EQ(again->headers.Get("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerTest, MalformedRequestGets400AndClose) {
  RawHttpClient client = Connect();
  Result<RawResponse> response = client.RoundTrip("GARBAGE\r\n\r\n");
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(ErrorOf(*response)["code"], "bad_request");
  EXPECT_TRUE(client.WaitForClose());
}

}  // namespace
}  // namespace kiln::http
