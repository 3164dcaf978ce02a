// Request::cancel: a worker-pool handler learns that its client went away.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using testing::MakeRequest;
using testing::RawHttpClient;

class HttpServerCancelTest : public ::testing::Test {
 protected:
  // POST /wait (worker pool) waits up to 20 s for its request to be
  // cancelled and reports whether it was; GET /now (worker pool) and
  // GET /inline report the signal at once.
  void SetUp() override {
    Router router;
    ASSERT_TRUE(router.Add("POST", "/wait", [this](Request request, Responder respond) {
      started_.store(true);
      const auto give_up = std::chrono::steady_clock::now() + 20s;
      while (!request.cancelled() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(1ms);
      }
      saw_cancel_.set_value(request.cancelled());
      respond(Response::Text(200, request.cancelled() ? "cancelled" : "not cancelled"));
    }));
    ASSERT_TRUE(router.Add("GET", "/now", [](Request request, Responder respond) {
      respond(Response::Text(200, request.cancel == nullptr ? "none" : request.cancelled() ? "cancelled" : "live"));
    }));
    ASSERT_TRUE(router.Add(
        "GET", "/inline",
        [](Request request, Responder respond) { respond(Response::Text(200, request.cancel ? "signal" : "none")); },
        Execution::kInline));
    server_ = testing::StartServer(testing::TestOptions(), std::move(router));
    ASSERT_NE(server_, nullptr);
  }

  RawHttpClient SendWait() {
    Result<RawHttpClient> client = RawHttpClient::Connect(server_->port(), 30s);
    EXPECT_TRUE(client) << client.error().message;
    EXPECT_TRUE(client->Send(MakeRequest("POST", "/wait", "x")));
    while (!started_.load()) std::this_thread::sleep_for(1ms);
    return std::move(*client);
  }

  std::atomic<bool> started_{false};
  std::promise<bool> saw_cancel_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerCancelTest, ResetConnectionCancelsItsRequest) {
  RawHttpClient client = SendWait();
  client.Reset();
  EXPECT_TRUE(saw_cancel_.get_future().get());
}

TEST_F(HttpServerCancelTest, ClientEofCancelsItsRequestAndTheAnswerIsStillWritten) {
  RawHttpClient client = SendWait();
  client.ShutdownWrite();
  EXPECT_TRUE(saw_cancel_.get_future().get());
  Result<testing::RawResponse> answer = client.ReadResponse();
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->body, "cancelled");
}

TEST_F(HttpServerCancelTest, ALiveClientsRequestIsNotCancelled) {
  Result<RawHttpClient> client = RawHttpClient::Connect(server_->port());
  ASSERT_TRUE(client) << client.error().message;
  Result<testing::RawResponse> now = client->RoundTrip(MakeRequest("GET", "/now"));
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_EQ(now->body, "live");
  Result<testing::RawResponse> inline_answer = client->RoundTrip(MakeRequest("GET", "/inline"));
  ASSERT_TRUE(inline_answer) << inline_answer.error().message;
  EXPECT_EQ(inline_answer->body, "none");  // answered at once: nothing to cancel
}

}  // namespace
}  // namespace kiln::http
