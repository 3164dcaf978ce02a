// Worker-pool handlers, saturation, graceful stop, metrics and access log.
#include <gtest/gtest.h>

#include <regex>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::Gate;
using testing::RawResponse;

RawHttpClient Connect(const HttpServer& server) {
  Result<RawHttpClient> client = RawHttpClient::Connect(server.port());
  EXPECT_TRUE(client) << client.error().message;
  return std::move(*client);
}

TEST(HttpServerWorkersTest, SlowHandlersCompleteOutOfOrderAcrossConnections) {
  Gate gate;
  std::latch slow_started(1);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           slow_started.count_down();
                           bool opened = gate.Wait();
                           return Response::Text(200, opened ? "slow" : "gate stayed shut");
                         })));
  ASSERT_TRUE(router.Add("GET", "/fast",
                         SyncHandler([&](const Request&) { return Response::Text(200, "fast"); })));
  std::unique_ptr<HttpServer> server =
      testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);

  RawHttpClient a = Connect(*server);
  RawHttpClient b = Connect(*server);
  ASSERT_TRUE(a.Send(MakeRequest("GET", "/slow")));
  slow_started.wait();
  // B is answered while A's handler is still blocked on a worker.
  Result<RawResponse> fast = b.RoundTrip(MakeRequest("GET", "/fast"));
  ASSERT_TRUE(fast) << fast.error().message;
  EXPECT_EQ(fast->body, "fast");
  gate.Open();
  Result<RawResponse> slow = a.ReadResponse();
  ASSERT_TRUE(slow) << slow.error().message;
  EXPECT_EQ(slow->body, "slow");
}

TEST(HttpServerWorkersTest, InlineHandlersRunOnTheLoopThreadAndSlowOnesDoNot) {
  std::mutex mu;
  std::set<std::thread::id> inline_threads;
  std::set<std::thread::id> worker_threads;
  Router router;
  ASSERT_TRUE(router.Add("GET", "/inline", SyncHandler([&](const Request&) {
                           std::lock_guard lock(mu);
                           inline_threads.insert(std::this_thread::get_id());
                           return Response::Text(200, "i");
                         }),
                         Execution::kInline));
  ASSERT_TRUE(router.Add("GET", "/worker", SyncHandler([&](const Request&) {
                           std::lock_guard lock(mu);
                           worker_threads.insert(std::this_thread::get_id());
                           return Response::Text(200, "w");
                         })));
  std::unique_ptr<HttpServer> server =
      testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);
  for (int c = 0; c < 3; ++c) {
    RawHttpClient client = Connect(*server);
    ASSERT_TRUE(client.RoundTrip(MakeRequest("GET", "/inline")));
    ASSERT_TRUE(client.RoundTrip(MakeRequest("GET", "/worker")));
  }
  std::lock_guard lock(mu);
  ASSERT_EQ(inline_threads.size(), 1u);  // the one loop thread, for every connection
  EXPECT_FALSE(inline_threads.contains(std::this_thread::get_id()));
  for (std::thread::id id : worker_threads) EXPECT_FALSE(inline_threads.contains(id));
}

TEST(HttpServerWorkersTest, SaturatedPoolAnswers503WithRetryAfter) {
  Gate gate;
  std::latch first_started(1);
  std::atomic<int> calls{0};
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           if (calls.fetch_add(1) == 0) first_started.count_down();
                           gate.Wait();
                           return Response::Text(200, "done");
                         })));
  HttpServerOptions options = testing::TestOptions();
  options.worker_threads = 1;
  options.worker_queue_capacity = 1;
  options.retry_after_seconds = 2;
  std::unique_ptr<HttpServer> server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);

  RawHttpClient running = Connect(*server);
  ASSERT_TRUE(running.Send(MakeRequest("GET", "/slow")));
  first_started.wait();  // the only worker is busy
  // Two more requests race for the one queue slot: whichever loses is
  // answered 503 at once, the other waits for the worker.
  RawHttpClient b = Connect(*server);
  RawHttpClient c = Connect(*server);
  ASSERT_TRUE(b.Send(MakeRequest("GET", "/slow")));
  ASSERT_TRUE(c.Send(MakeRequest("GET", "/slow")));
  std::future<Result<RawResponse>> b_response =
      std::async(std::launch::async, [&] { return b.ReadResponse(); });
  std::future<Result<RawResponse>> c_response =
      std::async(std::launch::async, [&] { return c.ReadResponse(); });
  std::future<Result<RawResponse>>* refused = nullptr;
  for (int i = 0; i < 1000 && refused == nullptr; ++i) {
    if (b_response.wait_for(5ms) == std::future_status::ready) refused = &b_response;
    if (c_response.wait_for(0ms) == std::future_status::ready) refused = &c_response;
  }
  ASSERT_NE(refused, nullptr) << "neither request was refused";
  std::future<Result<RawResponse>>* queued = refused == &b_response ? &c_response : &b_response;
  Result<RawResponse> busy = refused->get();
  ASSERT_TRUE(busy) << busy.error().message;
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(busy->headers.Get("Retry-After"), "2");
  EXPECT_NE(busy->body.find("\"overloaded\""), std::string::npos);

  gate.Open();
  Result<RawResponse> first = running.ReadResponse();
  Result<RawResponse> second = queued->get();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(calls.load(), 2);
}

TEST(HttpServerWorkersTest, GracefulStopFinishesAnInFlightRequest) {
  Gate gate;
  std::latch started(1);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           started.count_down();
                           gate.Wait();
                           return Response::Text(200, "finished");
                         })));
  std::unique_ptr<HttpServer> server =
      testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);
  uint16_t port = server->port();

  RawHttpClient busy = Connect(*server);
  RawHttpClient idle = Connect(*server);
  ASSERT_TRUE(busy.Send(MakeRequest("GET", "/slow")));
  started.wait();
  std::future<void> stopped = std::async(std::launch::async, [&] { server->Stop(); });
  EXPECT_TRUE(idle.WaitForClose());  // idle connections close at once
  EXPECT_EQ(stopped.wait_for(100ms), std::future_status::timeout);  // waits for /slow
  gate.Open();
  Result<RawResponse> response = busy.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->body, "finished");
  EXPECT_EQ(response->headers.Get("Connection"), "close");
  EXPECT_TRUE(busy.WaitForClose());
  EXPECT_EQ(stopped.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(RawHttpClient::Connect(port));  // no longer listening
}

TEST(HttpServerWorkersTest, StopGivesUpOnAHandlerAfterTheGracePeriod) {
  Gate gate;
  std::latch started(1);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/stuck", SyncHandler([&](const Request&) {
                           started.count_down();
                           gate.Wait();
                           return Response::Text(200, "too late");
                         })));
  HttpServerOptions options = testing::TestOptions();
  options.shutdown_grace = 100ms;
  testing::CapturedLog log;
  options.access_log = log.Sink();
  std::unique_ptr<HttpServer> server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);
  RawHttpClient client = Connect(*server);
  ASSERT_TRUE(client.Send(MakeRequest("GET", "/stuck")));
  started.wait();
  server->Stop();  // returns after the grace period with the handler still blocked
  EXPECT_TRUE(client.WaitForClose());
  gate.Open();  // lets the worker finish so the pool can join
  server.reset();
  std::vector<std::string> lines = log.lines();
  ASSERT_EQ(lines.size(), 1u);  // the abandoned request is still logged
  EXPECT_NE(lines[0].find("\"GET /stuck\" 503 0 "), std::string::npos) << lines[0];
}

TEST(HttpServerWorkersTest, ClientThatResetsBeforeItsAnswerIsLogged499) {
  Gate gate;
  std::latch started(1);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           started.count_down();
                           gate.Wait();
                           return Response::Text(200, "nobody listens");
                         })));
  HttpServerOptions options = testing::TestOptions();
  testing::CapturedLog log;
  options.access_log = log.Sink();
  std::unique_ptr<HttpServer> server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);
  RawHttpClient client = Connect(*server);
  ASSERT_TRUE(client.Send(MakeRequest("GET", "/slow")));
  started.wait();
  client.Reset();
  for (int i = 0; i < 500 && log.lines().empty(); ++i) std::this_thread::sleep_for(10ms);
  gate.Open();
  std::vector<std::string> lines = log.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"GET /slow\" 499 0 "), std::string::npos) << lines[0];
}

TEST(HttpServerWorkersTest, DroppedResponderAnswers500) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/forgets", [](Request, Responder) {}));
  std::unique_ptr<HttpServer> server =
      testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);
  RawHttpClient client = Connect(*server);
  Result<RawResponse> response = client.RoundTrip(MakeRequest("GET", "/forgets"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 500);
}

TEST(HttpServerWorkersTest, ThrowingHandlersAnswer500AndTheServerLives) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/throws-inline", SyncHandler([](const Request&) -> Response {
                           throw std::runtime_error("inline boom");
                         }),
                         Execution::kInline));
  ASSERT_TRUE(router.Add("GET", "/throws", SyncHandler([](const Request&) -> Response {
                           throw std::runtime_error("worker boom");
                         })));
  std::unique_ptr<HttpServer> server =
      testing::StartServer(testing::TestOptions(), std::move(router));
  ASSERT_NE(server, nullptr);
  RawHttpClient client = Connect(*server);
  for (int i = 0; i < 3; ++i) {
    for (const char* path : {"/throws-inline", "/throws"}) {
      Result<RawResponse> response = client.RoundTrip(MakeRequest("GET", path));
      ASSERT_TRUE(response) << response.error().message;
      EXPECT_EQ(response->status, 500) << path;
    }
  }
}

TEST(HttpServerWorkersTest, MetricsCountRequestsAndTheAccessLogHasOneLineEach) {
  metrics::MetricsRegistry registry;
  testing::CapturedLog log;
  Router router;
  ASSERT_TRUE(router.Add("GET", "/metrics", SyncHandler([&](const Request&) {
                           return Response::Text(200, registry.RenderPrometheus(),
                                                 std::string(metrics::kPrometheusContentType));
                         }),
                         Execution::kInline));
  ASSERT_TRUE(router.Add("GET", "/v1/executables/{key}",
                         SyncHandler([](const Request&) { return Response::Text(200, "x"); })));
  HttpServerOptions options = testing::TestOptions();
  options.metrics = &registry;
  options.access_log = log.Sink();
  std::unique_ptr<HttpServer> server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);

  RawHttpClient client = Connect(*server);
  ASSERT_TRUE(client.RoundTrip(MakeRequest("GET", "/v1/executables/a")));
  ASSERT_TRUE(client.RoundTrip(MakeRequest("GET", "/v1/executables/b")));
  ASSERT_TRUE(client.RoundTrip(MakeRequest("GET", "/missing")));
  Result<RawResponse> metrics = client.RoundTrip(MakeRequest("GET", "/metrics"));
  ASSERT_TRUE(metrics);
  const std::string& text = metrics->body;
  EXPECT_NE(text.find("kiln_http_requests_total{route=\"/v1/executables/{key}\",method=\"GET\","
                      "status=\"200\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln_http_requests_total{route=\"-\",method=\"GET\",status=\"404\"} 1\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("kiln_http_request_duration_seconds_count{route=\"/v1/executables/{key}\"} 2\n"),
      std::string::npos);
  EXPECT_NE(text.find("kiln_http_open_connections 1\n"), std::string::npos);

  server->Stop();
  std::vector<std::string> lines = log.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("\"GET /v1/executables/a\" 200 1 "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("route=/v1/executables/{key}"), std::string::npos);
  EXPECT_NE(lines[2].find("\"GET /missing\" 404 "), std::string::npos) << lines[2];
  // Each line starts with its time (a probe found none): UTC, milliseconds.
  const std::regex stamped(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1:\d+ ")");
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_search(line, stamped)) << line;
}

TEST(HttpServerWorkersTest, StartFailsCleanlyOnABusyPort) {
  Router router;
  std::unique_ptr<HttpServer> first = testing::StartServer(testing::TestOptions(), Router());
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->Start());  // once per server
  HttpServerOptions options = testing::TestOptions();
  options.port = first->port();
  HttpServer second(options, std::move(router));
  Status status = second.Start();
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("is already in use"), std::string::npos)
      << status.error().message;

  options.host = "not-an-address";
  options.port = 0;
  HttpServer third(options, Router());
  EXPECT_FALSE(third.Start());
}

TEST(HttpServerWorkersTest, SigtermDrainsInFlightRequestsAndRunReturns) {
  Gate gate;
  std::latch started(1);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           started.count_down();
                           gate.Wait();
                           return Response::Text(200, "drained");
                         })));
  HttpServer server(testing::TestOptions(), std::move(router));
  std::future<Status> run = std::async(std::launch::async, [&] { return server.Run(); });
  // Run publishes the port once its signal watchers are installed.
  for (int i = 0; i < 500 && server.port() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_NE(server.port(), 0);

  RawHttpClient client = Connect(server);
  ASSERT_TRUE(client.Send(MakeRequest("GET", "/slow")));
  started.wait();
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_EQ(run.wait_for(100ms), std::future_status::timeout);  // draining, not gone
  gate.Open();
  Result<RawResponse> response = client.ReadResponse();
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->body, "drained");
  EXPECT_EQ(response->headers.Get("Connection"), "close");
  ASSERT_EQ(run.wait_for(10s), std::future_status::ready);
  Status status = run.get();
  EXPECT_TRUE(status) << status.error().message;
}

}  // namespace
}  // namespace kiln::http
