// The connection cap: idle keep-alive connections make room for new ones,
// and a newcomer finding none idle is answered 503. Through real sockets.
#include <gtest/gtest.h>

#include <latch>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/http/testing/test_server.h"

namespace kiln::http {
namespace {

using testing::ConnectOrFail;
using testing::Gate;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::RawResponse;

// The value of an unlabelled series in Prometheus text.
double MetricValue(const HttpServer& server, const std::string& name) {
  std::string text = const_cast<HttpServer&>(server).metrics().RenderPrometheus();
  std::smatch match;
  if (!std::regex_search(text, match, std::regex("\n" + name + " ([0-9.e+]+)\n"))) return -1;
  return std::stod(match[1]);
}

// testing::CountingEchoRouter behind a server with the given cap (0: none).
std::unique_ptr<HttpServer> StartEchoServer(size_t max_connections, std::atomic<int>& calls) {
  HttpServerOptions options = testing::TestOptions();
  options.max_connections = max_connections;
  return testing::StartServer(options, testing::CountingEchoRouter(calls));
}

// Waits (bounded) until the series reads `value`; what it read last.
double WaitForMetric(const HttpServer& server, const std::string& name, double value) {
  double read = MetricValue(server, name);
  for (int i = 0; i < 500 && read != value; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    read = MetricValue(server, name);
  }
  return read;
}

void ExpectServed(RawHttpClient& client) {
  Result<RawResponse> response = client.RoundTrip(MakeRequest("GET", "/echo"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
}

// GET `target` on a new connection, retrying (at most 50 times, 20 ms
// apart) a 503 "overloaded" answer as a client told Retry-After would. A
// keep-alive connection counts as idle once the loop has finished writing
// its response, which on a busy machine may be a moment after the client
// read it: a newcomer in that moment is refused, the next is served.
// `refused` counts the 503s.
Result<RawResponse> RoundTripRetrying(const HttpServer& server, const std::string& target, int& refused,
                                      std::optional<RawHttpClient>* kept = nullptr) {
  Result<RawResponse> response = InternalError("no attempt");
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Result<RawHttpClient> client = RawHttpClient::Connect(server.port());
    if (!client) return client.error();
    response = client->RoundTrip(MakeRequest("GET", target));
    if (response && response->status == 503 && response->body.find("\"overloaded\"") != std::string::npos) {
      ++refused;
      continue;
    }
    if (kept != nullptr) kept->emplace(std::move(*client));
    return response;
  }
  return response;
}

TEST(HttpServerConnectionsTest, AtTheCapTheLongestIdleConnectionMakesRoom) {
  std::atomic<int> calls{0};
  auto server = StartEchoServer(3, calls);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(MetricValue(*server, "kiln_http_max_connections"), 3);

  std::vector<RawHttpClient> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(ConnectOrFail(server->port()));
    ExpectServed(clients.back());  // idle since, in this order
  }
  RawHttpClient fourth = ConnectOrFail(server->port());
  ExpectServed(fourth);
  EXPECT_TRUE(clients[0].WaitForClose()) << "the longest idle one makes room";
  ExpectServed(clients[1]);  // idle again, now after the third
  RawHttpClient fifth = ConnectOrFail(server->port());
  ExpectServed(fifth);
  EXPECT_TRUE(clients[2].WaitForClose());
  ExpectServed(clients[1]);
  ExpectServed(fourth);
  EXPECT_EQ(MetricValue(*server, "kiln_http_shed_connections_total"), 2);
  EXPECT_EQ(MetricValue(*server, "kiln_http_refused_connections_total"), 0);
  EXPECT_EQ(MetricValue(*server, "kiln_http_open_connections"), 3);
}

// Two loops share one cap: busy connections on either count.
TEST(HttpServerConnectionsTest, WithNoConnectionIdleANewcomerGets503) {
  Gate gate;
  std::latch started(2);
  Router router;
  ASSERT_TRUE(router.Add("GET", "/slow", SyncHandler([&](const Request&) {
                           started.count_down();
                           return Response::Text(200, gate.Wait() ? "done" : "gate stayed shut");
                         })));
  ASSERT_TRUE(router.Add("GET", "/echo",
                         SyncHandler([](const Request&) { return Response::Text(200, "ok"); }),
                         Execution::kInline));
  HttpServerOptions options = testing::TestOptions();
  options.max_connections = 2;
  options.loops = 2;
  options.retry_after_seconds = 3;
  auto server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);

  std::vector<RawHttpClient> busy;
  for (int i = 0; i < 2; ++i) {
    busy.push_back(ConnectOrFail(server->port()));
    ASSERT_TRUE(busy.back().Send(MakeRequest("GET", "/slow")));
  }
  started.wait();  // both are in their handlers: neither is idle

  RawHttpClient refused = ConnectOrFail(server->port());
  Result<RawResponse> answer = refused.ReadResponse();  // sent without a request
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->headers.Get("Retry-After"), "3");
  EXPECT_EQ(answer->headers.Get("Connection"), "close");
  nlohmann::json error = nlohmann::json::parse(answer->body)["error"];
  EXPECT_EQ(error["code"], "overloaded");
  EXPECT_EQ(error["message"],
            "the server holds its maximum of 2 connections and none is idle; retry later");
  EXPECT_TRUE(refused.WaitForClose());
  EXPECT_EQ(MetricValue(*server, "kiln_http_refused_connections_total"), 1);

  gate.Open();
  for (RawHttpClient& client : busy) {
    Result<RawResponse> done = client.ReadResponse();
    ASSERT_TRUE(done) << done.error().message;
    EXPECT_EQ(done->body, "done");
  }
  // Idle now: a newcomer takes the place of one of them (on its loop or,
  // with nothing idle there, on the other).
  int refused_later = 0;
  Result<RawResponse> later = RoundTripRetrying(*server, "/echo", refused_later);
  ASSERT_TRUE(later) << later.error().message;
  EXPECT_EQ(later->status, 200);
  EXPECT_EQ(WaitForMetric(*server, "kiln_http_shed_connections_total", 1), 1);
}

// The loops share one cap, and a loop with nothing idle of its own has
// another loop make room: the loops' shares never freeze, whichever loop
// the kernel hands a newcomer to.
TEST(HttpServerConnectionsTest, ANewcomerTakesTheRoomOfAnIdleConnectionOnAnotherLoop) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/where", SyncHandler([](const Request&) {
                           std::ostringstream thread;
                           thread << std::this_thread::get_id();
                           return Response::Text(200, thread.str());
                         }),
                         Execution::kInline));
  HttpServerOptions options = testing::TestOptions();
  options.max_connections = 1;
  options.loops = 2;
  auto server = testing::StartServer(options, std::move(router));
  ASSERT_NE(server, nullptr);

  RawHttpClient holder = ConnectOrFail(server->port());
  Result<RawResponse> first = holder.RoundTrip(MakeRequest("GET", "/where"));  // accepted, idle
  ASSERT_TRUE(first) << first.error().message;
  std::set<std::string> loops = {first->body};
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    std::optional<RawHttpClient> next;
    Result<RawResponse> where = RoundTripRetrying(*server, "/where", refused, &next);
    ASSERT_TRUE(where) << i << ": " << where.error().message;
    ASSERT_EQ(where->status, 200) << i << ": " << where->body;
    loops.insert(where->body);
    EXPECT_TRUE(holder.WaitForClose()) << i << ": the idle one made room";
    holder = std::move(*next);
  }
  // 40 newcomers all on one of two loops would be a 1-in-2^39 event.
  EXPECT_EQ(loops.size(), 2u);
  // Each newcomer served displaced the idle one; a refused one (its
  // predecessor's response still being written) displaced nothing.
  EXPECT_EQ(MetricValue(*server, "kiln_http_shed_connections_total"), 40);
  EXPECT_EQ(MetricValue(*server, "kiln_http_refused_connections_total"), refused);
  EXPECT_LE(refused, 5) << "refusals are the rare race, not the rule";
}

TEST(HttpServerConnectionsTest, ConnectionsThatSentNothingAreIdleToo) {
  std::atomic<int> calls{0};
  auto server = StartEchoServer(4, calls);
  ASSERT_NE(server, nullptr);
  // Many more silent sockets than the cap, as a careless or hostile client
  // would open: each newcomer displaces the longest-silent one.
  std::vector<RawHttpClient> silent;
  for (int i = 0; i < 40; ++i) silent.push_back(ConnectOrFail(server->port()));
  RawHttpClient health = ConnectOrFail(server->port());
  ExpectServed(health);
  EXPECT_TRUE(silent.front().WaitForClose());
  EXPECT_LE(MetricValue(*server, "kiln_http_open_connections"), 4);
  EXPECT_GE(MetricValue(*server, "kiln_http_shed_connections_total"), 37);
}

TEST(HttpServerConnectionsTest, NoCapByDefault) {
  std::atomic<int> calls{0};
  auto server = StartEchoServer(0, calls);
  ASSERT_NE(server, nullptr);
  std::vector<RawHttpClient> clients;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(ConnectOrFail(server->port()));
    ExpectServed(clients.back());
  }
  for (RawHttpClient& client : clients) ExpectServed(client);
  EXPECT_EQ(MetricValue(*server, "kiln_http_shed_connections_total"), 0);
  EXPECT_EQ(MetricValue(*server, "kiln_http_max_connections"), 0);
}

}  // namespace
}  // namespace kiln::http
