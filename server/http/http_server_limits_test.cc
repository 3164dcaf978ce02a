// Size limits, timeouts and broken clients, through a real socket.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/http/content_coding.h"
#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

std::string ErrorCode(const RawResponse& response) {
  return nlohmann::json::parse(response.body)["error"]["code"];
}

class HttpServerLimitsTest : public ::testing::Test {
 protected:
  // POST /body (worker pool) answers the body and counts its calls;
  // GET /echo (inline) answers "ok"; GET /blob (inline) answers 3 MiB.
  void Start(HttpServerOptions options) {
    Router router = testing::CountingEchoRouter(handler_calls_);
    ASSERT_TRUE(router.Add("GET", "/blob", SyncHandler([this](const Request&) {
                             return Response::WithBytes(200, blob_, "application/octet-stream");
                           }),
                           Execution::kInline));
    server_ = testing::StartServer(std::move(options), std::move(router));
    ASSERT_NE(server_, nullptr);
  }
  RawHttpClient Connect() { return testing::ConnectOrFail(server_->port()); }

  static Bytes MakeBlob() {
    std::string blob(3 << 20, '\0');
    for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i * 31 + i / 4096);
    return MakeBytes(std::move(blob));
  }

  std::atomic<int> handler_calls_{0};
  const Bytes blob_ = MakeBlob();  // 3 MiB shared by every /blob response
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerLimitsTest, OversizeHeadersGet431) {
  HttpServerOptions options = testing::TestOptions();
  options.max_header_bytes = 1024;
  Start(options);
  RawHttpClient client = Connect();
  Result<RawResponse> response = client.RoundTrip(
      MakeRequest("GET", "/echo", {}, "X-Big: " + std::string(4000, 'h') + "\r\n"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(ErrorCode(*response), "headers_too_large");
  EXPECT_EQ(response->headers.Get("Connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerLimitsTest, OversizeContentLengthGets413) {
  HttpServerOptions options = testing::TestOptions();
  options.max_body_bytes = 1000;
  Start(options);
  RawHttpClient client = Connect();
  Result<RawResponse> response =
      client.RoundTrip(MakeRequest("POST", "/body", std::string(5000, 'b')));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(ErrorCode(*response), "payload_too_large");
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerLimitsTest, OversizeChunkedBodyGets413) {
  HttpServerOptions options = testing::TestOptions();
  options.max_body_bytes = 1000;
  Start(options);
  RawHttpClient client = Connect();
  std::string chunk(600, 'c');
  Result<RawResponse> response = client.RoundTrip(
      "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "258\r\n" +
      chunk + "\r\n258\r\n" + chunk + "\r\n0\r\n\r\n");
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerLimitsTest, ExpectContinueOverTheLimitGets413Instead) {
  HttpServerOptions options = testing::TestOptions();
  options.max_body_bytes = 1000;
  Start(options);
  RawHttpClient client = Connect();
  Result<RawResponse> response = client.RoundTrip(
      "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n");
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 413);  // not 100: the client must not send the body
  EXPECT_TRUE(client.WaitForClose());
}

TEST_F(HttpServerLimitsTest, ZstdBodyDecodingPastTheLimitGets413) {
  HttpServerOptions options = testing::TestOptions();
  options.max_body_bytes = 10000;
  Start(options);
  RawHttpClient client = Connect();
  std::string bomb = ZstdCompress(std::string(1 << 20, 'z'), 3);
  ASSERT_LT(bomb.size(), 10000u);
  Result<RawResponse> response =
      client.RoundTrip(MakeRequest("POST", "/body", bomb, "Content-Encoding: zstd\r\n"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerLimitsTest, TruncatedBodyThenCloseNeverReachesTheHandler) {
  Start(testing::TestOptions());
  RawHttpClient client = Connect();
  ASSERT_TRUE(
      client.Send("POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n0123456789"));
  client.ShutdownWrite();
  Result<RawResponse> response = client.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(ErrorCode(*response), "incomplete_request");
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler_calls_.load(), 0);
}

TEST_F(HttpServerLimitsTest, SlowClientIsCutOffWhileOthersAreServed) {
  HttpServerOptions options = testing::TestOptions();
  options.request_timeout = 300ms;
  Start(options);
  RawHttpClient slow = Connect();
  RawHttpClient fast = Connect();
  std::string request =
      MakeRequest("GET", "/echo", {}, "X-Padding: " + std::string(200, 'p') + "\r\n");
  // Trickle the headers a byte every 20 ms: the whole request would take 5 s.
  int rounds = 0;
  int served = 0;
  for (; rounds < 60; ++rounds) {
    if (!slow.Send(request.substr(rounds, 1))) break;  // the server may already have closed
    Result<RawResponse> other = fast.RoundTrip(MakeRequest("GET", "/echo"));
    ASSERT_TRUE(other) << other.error().message;
    served += other->status == 200;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(served, rounds);
  EXPECT_GT(served, 0);
  Result<RawResponse> cut = slow.ReadResponse();
  ASSERT_TRUE(cut) << cut.error().message;
  EXPECT_EQ(cut->status, 408);
  EXPECT_EQ(ErrorCode(*cut), "request_timeout");
  EXPECT_TRUE(slow.WaitForClose());
}

TEST_F(HttpServerLimitsTest, IdleKeepAliveConnectionIsClosed) {
  HttpServerOptions options = testing::TestOptions();
  options.idle_timeout = 200ms;
  Start(options);
  RawHttpClient client = Connect();
  Result<RawResponse> response = client.RoundTrip(MakeRequest("GET", "/echo"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(client.WaitForClose());  // bounded by the client's 5 s timeout
}

TEST_F(HttpServerLimitsTest, ManyPipelinedRequestsPastThePipelineLimit) {
  HttpServerOptions options = testing::TestOptions();
  options.max_pipelined_requests = 4;
  Start(options);
  RawHttpClient client = Connect();
  std::string requests;
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) {
    requests +=
        i % 2 ? MakeRequest("GET", "/echo") : MakeRequest("POST", "/body", std::to_string(i));
  }
  ASSERT_TRUE(client.Send(requests));
  for (int i = 0; i < kRequests; ++i) {
    Result<RawResponse> response = client.ReadResponse();
    ASSERT_TRUE(response) << i << ": " << response.error().message;
    EXPECT_EQ(response->body, i % 2 ? "ok" : std::to_string(i));
  }
}

TEST_F(HttpServerLimitsTest, LargeResponsesToASlowReaderArriveIntact) {
  HttpServerOptions options = testing::TestOptions();
  options.max_write_queue_bytes = 1 << 20;
  Start(options);
  RawHttpClient client = Connect();
  std::string requests;
  for (int i = 0; i < 6; ++i) requests += MakeRequest("GET", "/blob");
  ASSERT_TRUE(client.Send(requests));
  std::this_thread::sleep_for(200ms);  // let the server's writes back up
  for (int i = 0; i < 6; ++i) {
    Result<RawResponse> response = client.ReadResponse();
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_TRUE(response->body == *blob_) << "response " << i << " differs";
  }
}

TEST_F(HttpServerLimitsTest, ClientResetDuringALargeResponseLeavesTheServerServing) {
  Start(testing::TestOptions());
  for (int i = 0; i < 6; ++i) {
    RawHttpClient client = Connect();
    ASSERT_TRUE(client.Send(MakeRequest("GET", "/blob") + MakeRequest("GET", "/blob")));
    std::this_thread::sleep_for(5ms);
    // The server is mid-write; its writes now fail (ECONNRESET or EPIPE).
    // It must drop the connection, free the write, and keep serving.
    if (i % 2 == 0) {
      client.Reset();
    } else {
      RawHttpClient closed = std::move(client);  // plain close when it goes out of scope
    }
  }
  RawHttpClient after = Connect();
  Result<RawResponse> response = after.RoundTrip(MakeRequest("GET", "/echo"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->body, "ok");
}

TEST(HttpServerOptionsTest, NonsenseOptionsFailToStart) {
  HttpServerOptions options = testing::TestOptions();
  options.max_pipelined_requests = 0;
  HttpServer server(options, Router());
  Status status = server.Start();
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("max_pipelined_requests"), std::string::npos);
}

}  // namespace
}  // namespace kiln::http
