// Routes' inline fast paths, HEAD lengths without bodies, pipelined big bodies.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server/http/content_coding.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

std::string Pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return bytes;
}

// GET /items/{name}: "hot" is answered by the fast path (on the loop
// thread), anything else by the handler on the worker pool.
struct FastPathServer {
  std::atomic<int> fast_answers{0};
  std::atomic<int> handler_answers{0};
  std::thread::id fast_thread;
  std::thread::id handler_thread;
  Bytes hot_body = MakeBytes(Pattern(64 << 10));

  Router MakeRouter() {
    Router router;
    EXPECT_TRUE(router.Add(
        "GET", "/items/{name}",
        [this](const Request& request) -> std::optional<Response> {
          if (request.PathParam("name") != "hot") return std::nullopt;
          fast_thread = std::this_thread::get_id();
          ++fast_answers;
          Response response = Response::WithBytes(200, hot_body, "application/octet-stream");
          if (request.method == "HEAD") {
            response.body = nullptr;
            response.head_content_length = hot_body->size();
          }
          return response;
        },
        SyncHandler([this](const Request& request) {
          handler_thread = std::this_thread::get_id();
          ++handler_answers;
          return Response::Text(200,
                                "from the handler: " + std::string(*request.PathParam("name")));
        })));
    return router;
  }
};

TEST(HttpServerFastPathTest, AnswersInlineOrFallsThroughToTheHandler) {
  FastPathServer state;
  auto server = testing::StartServer(testing::TestOptions(), state.MakeRouter());
  ASSERT_NE(server, nullptr);
  Result<RawHttpClient> client = RawHttpClient::Connect(server->port());
  ASSERT_TRUE(client);

  Result<RawResponse> hot = client->RoundTrip(MakeRequest("GET", "/items/hot"));
  ASSERT_TRUE(hot) << hot.error().message;
  EXPECT_EQ(hot->status, 200);
  EXPECT_EQ(hot->body, *state.hot_body);
  Result<RawResponse> cold = client->RoundTrip(MakeRequest("GET", "/items/cold"));
  ASSERT_TRUE(cold) << cold.error().message;
  EXPECT_EQ(cold->body, "from the handler: cold");
  EXPECT_EQ(state.fast_answers.load(), 1);
  EXPECT_EQ(state.handler_answers.load(), 1);
  EXPECT_NE(state.fast_thread, state.handler_thread)
      << "the fast path runs on the loop, the handler on a worker";
}

TEST(HttpServerFastPathTest, HeadAnnouncesTheLengthAndSendsNoBody) {
  FastPathServer state;
  auto server = testing::StartServer(testing::TestOptions(), state.MakeRouter());
  ASSERT_NE(server, nullptr);
  Result<RawHttpClient> client = RawHttpClient::Connect(server->port());
  ASSERT_TRUE(client);
  Result<RawResponse> head =
      client->RoundTrip(MakeRequest("HEAD", "/items/hot"), /*head_request=*/true);
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->headers.Get("Content-Length"), std::to_string(state.hot_body->size()));
  EXPECT_TRUE(head->body.empty());
  // The connection is still in step: no body bytes were left on the wire.
  Result<RawResponse> get = client->RoundTrip(MakeRequest("GET", "/items/hot"));
  ASSERT_TRUE(get) << get.error().message;
  EXPECT_EQ(get->body, *state.hot_body);
}

TEST(HttpServerFastPathTest, CompressionForZstdClientsHappensOffTheLoop) {
  FastPathServer state;
  auto server = testing::StartServer(testing::TestOptions(), state.MakeRouter());
  ASSERT_NE(server, nullptr);
  Result<RawHttpClient> client = RawHttpClient::Connect(server->port());
  ASSERT_TRUE(client);
  Result<RawResponse> response =
      client->RoundTrip(MakeRequest("GET", "/items/hot", {}, "Accept-Encoding: zstd\r\n"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->headers.Get("Content-Encoding"), "zstd");
  auto decoded = ZstdDecompress(response->body, 1 << 20);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, *state.hot_body);
  EXPECT_EQ(state.handler_answers.load(), 0);
}

// Pipelined big bodies go out batched in one writev, and a client that
// reads slowly gets them intact through backpressure.
TEST(HttpServerFastPathTest, PipelinedBigBodiesArriveIntact) {
  Bytes body = MakeBytes(Pattern(size_t{12} << 20));
  Router router;
  ASSERT_TRUE(router.Add("GET", "/big", SyncHandler([&](const Request&) {
                           Response response =
                               Response::WithBytes(200, body, "application/octet-stream");
                           response.compressible = false;
                           return response;
                         }),
                         Execution::kInline));
  auto server = testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);
  Result<RawHttpClient> client = RawHttpClient::Connect(server->port(), std::chrono::seconds(20));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Send(MakeRequest("GET", "/big") + MakeRequest("GET", "/big")));
  for (int i = 0; i < 2; ++i) {
    Result<RawResponse> response = client->ReadResponse();
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->body.size(), body->size());
    EXPECT_TRUE(response->body == *body);
  }
}

}  // namespace
}  // namespace kiln::http
