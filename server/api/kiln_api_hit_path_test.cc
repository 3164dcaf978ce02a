// The hit path: the routes' inline fast paths, called directly the way the
// loop thread calls them, next to the same service behind a real server.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "base/host_cores.h"
#include "runtime/kernels/isa_level.h"
#include "server/api/kiln_api.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using testing::ServerEnv;

constexpr std::string_view kText = "Content-Type: text/plain\r\n";

const http::Route& RouteOf(const http::Router& router, std::string_view method, std::string_view pattern) {
  for (const http::Route& route : router.routes()) {
    if (route.method == method && route.pattern == pattern) return route;
  }
  ADD_FAILURE() << "no route " << method << " " << pattern;
  return router.routes().front();
}

http::Request GetRequest(std::string_view method, const std::string& key) {
  http::Request request;
  request.method = std::string(method);
  request.path_params = {{"key", key}};
  return request;
}

http::Request CompileRequest(std::string body, http::Params query = {}) {
  http::Request request;
  request.method = "POST";
  request.headers.Add("Content-Type", "text/plain");
  request.query = std::move(query);
  request.body = std::move(body);
  return request;
}

class HitPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.ok());
    ASSERT_TRUE(env_.service().RegisterRoutes(router_));  // the same service, called directly
  }

  // Compiles the add module over HTTP: its key and executable bytes.
  std::pair<std::string, std::string> Compile() {
    auto compiled = env_.Call("POST", "/v1/compile?return=executable", testing::kAddModule, kText);
    EXPECT_EQ(compiled.status, 200);
    return {std::string(compiled.headers.Get("X-Kiln-Key").value_or("")), compiled.body};
  }

  ServerEnv env_;
  http::Router router_;
};

TEST_F(HitPathTest, GetAndHeadOfAnEntryInMemoryAreAnsweredByTheFastPath) {
  auto [key, bytes] = Compile();
  const http::Route& route = RouteOf(router_, "GET", "/v1/executables/{key}");
  ASSERT_TRUE(route.fast_path);

  std::optional<http::Response> got = route.fast_path(GetRequest("GET", key));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body_view(), bytes);
  EXPECT_EQ(got->headers.Get("ETag"), "\"" + key + "\"");
  EXPECT_EQ(got->headers.Get("X-Kiln-Chip"), "v5e");

  std::optional<http::Response> head = route.fast_path(GetRequest("HEAD", key));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->body, nullptr) << "HEAD builds no body";
  EXPECT_EQ(head->head_content_length, bytes.size());

  // The same answers over HTTP.
  auto fetched = env_.Call("GET", "/v1/executables/" + key);
  EXPECT_EQ(fetched.body, bytes);
  auto head_http = env_.Call("HEAD", "/v1/executables/" + key);
  EXPECT_EQ(head_http.status, 200);
  EXPECT_EQ(head_http.headers.Get("Content-Length"), std::to_string(bytes.size()));
}

TEST_F(HitPathTest, MissesAndJsonViewsFallThroughToTheHandler) {
  auto [key, bytes] = Compile();
  const http::Route& route = RouteOf(router_, "GET", "/v1/executables/{key}");
  EXPECT_FALSE(route.fast_path(GetRequest("GET", std::string(32, 'a')))) << "an unknown key";
  EXPECT_FALSE(route.fast_path(GetRequest("GET", "not-a-key"))) << "the handler explains the 400";
  http::Request json = GetRequest("GET", key);
  json.headers.Add("Accept", "application/json");
  EXPECT_FALSE(route.fast_path(json));
  EXPECT_EQ(env_.Call("GET", "/v1/executables/not-a-key").status, 400);

  // After a delete the index forgets the key: GET and HEAD are 404 again.
  EXPECT_EQ(env_.Call("DELETE", "/v1/executables/" + key).status, 204);
  EXPECT_FALSE(route.fast_path(GetRequest("GET", key)));
  EXPECT_FALSE(route.fast_path(GetRequest("HEAD", key)));
  EXPECT_EQ(env_.Call("GET", "/v1/executables/" + key).status, 404);
  EXPECT_EQ(env_.Call("HEAD", "/v1/executables/" + key).status, 404);
}

TEST_F(HitPathTest, ARepeatedCompileBodyIsAnsweredByTheFastPath) {
  const http::Route& route = RouteOf(router_, "POST", "/v1/compile");
  ASSERT_TRUE(route.fast_path);
  EXPECT_FALSE(route.fast_path(CompileRequest(testing::kAddModule))) << "never seen: compile on a worker";
  auto [key, bytes] = Compile();

  std::optional<http::Response> summary = route.fast_path(CompileRequest(testing::kAddModule));
  ASSERT_TRUE(summary);
  nlohmann::json body = nlohmann::json::parse(summary->body_view());
  EXPECT_EQ(body["key"], key);
  EXPECT_EQ(body["cache"], "hit");
  EXPECT_EQ(body["fast_path"], true);
  EXPECT_EQ(summary->headers.Get("X-Kiln-Cache"), "hit");

  std::optional<http::Response> executable =
      route.fast_path(CompileRequest(testing::kAddModule, {{"return", "executable"}}));
  ASSERT_TRUE(executable);
  EXPECT_EQ(executable->body_view(), bytes);

  // Another chip is another key; a JSON body is parsed on a worker.
  EXPECT_FALSE(route.fast_path(CompileRequest(testing::kAddModule, {{"chip", "v6e"}})));
  http::Request json = CompileRequest(nlohmann::json{{"hlo", testing::kAddModule}}.dump());
  json.headers.Set("Content-Type", "application/json");
  EXPECT_FALSE(route.fast_path(json));

  nlohmann::json stats = ServerEnv::Json(env_.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["compiles"]["fast_path"], 2);
}

TEST(HitPathAuthTest, TheFastPathChecksTokensInline) {
  ApiOptions options;
  auto auth = Authenticator::Parse(HashToken("reader-token") + " team-a read\n", "test");
  ASSERT_TRUE(auth) << auth.error().message;
  options.auth = std::move(*auth);
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  http::Router router;
  ASSERT_TRUE(env.service().RegisterRoutes(router));
  const http::Route& get = RouteOf(router, "GET", "/v1/executables/{key}");
  std::optional<http::Response> anonymous = get.fast_path(GetRequest("GET", std::string(32, 'a')));
  ASSERT_TRUE(anonymous) << "refusals are answered inline";
  EXPECT_EQ(anonymous->status, 401);
  const http::Route& compile = RouteOf(router, "POST", "/v1/compile");
  http::Request request = CompileRequest(testing::kAddModule);
  request.headers.Add("Authorization", "Bearer reader-token");
  std::optional<http::Response> forbidden = compile.fast_path(request);
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->status, 403) << "compiling needs role compile";
}

TEST(HitPathHealthTest, HealthzSaysDrainingWhileTheTransportDrains) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  std::atomic<bool> draining{false};
  env.service().SetDrainingProbe([&draining] { return draining.load(); });
  auto ok = env.Call("GET", "/healthz");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ServerEnv::Json(ok)["status"], "ok");
  EXPECT_EQ(ServerEnv::Json(ok)["kernels_isa"], runtime::IsaLevelName(runtime::ActiveIsaLevel()));
  EXPECT_EQ(ServerEnv::Json(ok)["host_cores"], HostCores::Get().total());
  draining = true;
  auto drained = env.Call("GET", "/healthz");
  EXPECT_EQ(drained.status, 503);
  EXPECT_EQ(ServerEnv::Json(drained)["status"], "draining");
  EXPECT_EQ(drained.headers.Get("Retry-After"), "1");
}

}  // namespace
}  // namespace kiln::api
