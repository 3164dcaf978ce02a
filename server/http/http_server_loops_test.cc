// Several loop threads on one port (SO_REUSEPORT), and draining.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <latch>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

HttpServerOptions LoopsOptions(int loops) {
  HttpServerOptions options = testing::TestOptions();
  options.loops = loops;
  return options;
}

TEST(HttpServerLoopsTest, ConnectionsSpreadOverTheLoops) {
  std::mutex mu;
  std::set<std::thread::id> loop_threads;
  Router router;
  ASSERT_TRUE(router.Add("GET", "/where", SyncHandler([&](const Request&) {
                           std::lock_guard lock(mu);
                           loop_threads.insert(std::this_thread::get_id());
                           return Response::Text(200, "here");
                         }),
                         Execution::kInline));
  auto server = testing::StartServer(LoopsOptions(3), std::move(router));
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->loop_count(), 3);
  // The kernel picks a listener by a hash of each connection's addresses:
  // 48 connections all landing on one of three loops is a 1-in-3^47 event.
  std::vector<RawHttpClient> clients;
  for (int i = 0; i < 48; ++i) {
    Result<RawHttpClient> client = RawHttpClient::Connect(server->port());
    ASSERT_TRUE(client) << client.error().message;
    Result<RawResponse> response = client->RoundTrip(MakeRequest("GET", "/where"));
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->body, "here");
    clients.push_back(std::move(*client));
  }
  std::lock_guard lock(mu);
  EXPECT_GE(loop_threads.size(), 2u);
  EXPECT_LE(loop_threads.size(), 3u);
}

TEST(HttpServerLoopsTest, ZeroMeansOneLoopPerCore) {
  auto server = testing::StartServer(LoopsOptions(0), Router());
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->loop_count(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(HttpServerLoopsTest, StopDrainsEveryLoopAndReportsDraining) {
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::latch started(4);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           started.count_down();
                           opened.wait_for(10s);
                           return Response::Text(200, "finished");
                         })));
  HttpServerOptions options = LoopsOptions(2);
  options.worker_threads = 4;
  auto server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(server->draining());
  // Enough connections that both loops hold one in flight (see above).
  std::vector<RawHttpClient> clients;
  for (int i = 0; i < 4; ++i) {
    Result<RawHttpClient> client = RawHttpClient::Connect(server->port(), 10s);
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->Send(MakeRequest("GET", "/slow")));
    clients.push_back(std::move(*client));
  }
  started.wait();
  std::future<void> stopped = std::async(std::launch::async, [&] { server->Stop(); });
  for (int i = 0; i < 200 && !server->draining(); ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(server->draining());
  EXPECT_EQ(stopped.wait_for(100ms), std::future_status::timeout)
      << "in-flight requests hold the stop";
  gate.set_value();
  for (RawHttpClient& client : clients) {
    Result<RawResponse> response = client.ReadResponse();
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->body, "finished");
    EXPECT_EQ(response->headers.Get("Connection"), "close");
  }
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
  // Every loop closed its listener.
  EXPECT_FALSE(RawHttpClient::Connect(server->port(), 1s));
}

TEST(HttpServerLoopsTest, AnotherServerCannotTakeASingleLoopPort) {
  auto first = testing::StartServer(LoopsOptions(1), Router());
  ASSERT_NE(first, nullptr);
  HttpServerOptions options = LoopsOptions(1);
  options.port = first->port();
  HttpServer second(options, Router());
  EXPECT_FALSE(second.Start());
}

// SO_REUSEPORT would let a second multi-loop server share the port and take
// half its connections; it must be refused, naming who holds the port.
TEST(HttpServerLoopsTest, AnotherServerCannotJoinAMultiLoopPort) {
  auto first = testing::StartServer(LoopsOptions(3), Router());
  ASSERT_NE(first, nullptr);
  for (int loops : {1, 2}) {
    HttpServerOptions options = LoopsOptions(loops);
    options.port = first->port();
    HttpServer second(options, Router());
    Status started = second.Start();
    ASSERT_FALSE(started) << loops << " loops";
    const std::string& message = started.error().message;
    const std::string port = std::to_string(first->port());
    EXPECT_TRUE(message.starts_with("127.0.0.1:" + port + " is already in use: pid " +
                                    std::to_string(getpid()) + " ("))
        << message;
    EXPECT_NE(message.find("kiln_http_tests"), std::string::npos) << message;
    EXPECT_TRUE(message.ends_with(") listens on port " + port)) << message;
  }
  Status check = HttpServer::CheckAddressFree("127.0.0.1", first->port());
  ASSERT_FALSE(check);
  EXPECT_NE(check.error().message.find("is already in use"), std::string::npos);
  EXPECT_TRUE(HttpServer::CheckAddressFree("127.0.0.1", 0));
  // The first server still has the port to itself and answers on it.
  Result<RawHttpClient> client = RawHttpClient::Connect(first->port());
  ASSERT_TRUE(client);
  Result<RawResponse> response = client->RoundTrip(MakeRequest("GET", "/nothing"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 404);
}

}  // namespace
}  // namespace kiln::http
