#include "server/http/router.h"

#include <gtest/gtest.h>

namespace kiln::http {
namespace {

Handler Noop() {
  return [](Request, Responder) {};
}

Router MakeRouter() {
  Router router;
  EXPECT_TRUE(router.Add("GET", "/v1/executables/{key}", Noop()));
  EXPECT_TRUE(router.Add("DELETE", "/v1/executables/{key}", Noop()));
  EXPECT_TRUE(router.Add("POST", "/v1/executables/{key}/execute", Noop()));
  EXPECT_TRUE(router.Add("POST", "/v1/compile", Noop(), Execution::kWorkerPool));
  EXPECT_TRUE(router.Add("GET", "/healthz", Noop(), Execution::kInline));
  return router;
}

TEST(RouterTest, MatchesLiteralAndCapturedSegments) {
  Router router = MakeRouter();
  RouteMatch match = router.Match("POST", "/v1/executables/ab%20cd/execute");
  ASSERT_EQ(match.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(match.route->pattern, "/v1/executables/{key}/execute");
  EXPECT_EQ(FindParam(match.path_params, "key"), "ab cd");

  match = router.Match("GET", "/healthz");
  ASSERT_EQ(match.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(match.route->execution, Execution::kInline);
}

TEST(RouterTest, OtherMethodGives405WithAllowList) {
  Router router = MakeRouter();
  RouteMatch match = router.Match("PUT", "/v1/executables/k");
  EXPECT_EQ(match.kind, RouteMatch::Kind::kMethodNotAllowed);
  EXPECT_EQ(match.allow, "GET, HEAD, DELETE");
  EXPECT_EQ(router.Match("GET", "/v1/compile").allow, "POST");
}

TEST(RouterTest, UnknownPathsGive404) {
  Router router = MakeRouter();
  EXPECT_EQ(router.Match("GET", "/v1/executables").kind, RouteMatch::Kind::kNotFound);
  EXPECT_EQ(router.Match("GET", "/v1/executables/").kind, RouteMatch::Kind::kNotFound);
  EXPECT_EQ(router.Match("GET", "/v1/executables/a/b").kind, RouteMatch::Kind::kNotFound);
  EXPECT_EQ(router.Match("GET", "/healthz/").kind, RouteMatch::Kind::kNotFound);
  EXPECT_EQ(router.Match("GET", "").kind, RouteMatch::Kind::kNotFound);
}

TEST(RouterTest, HeadFallsBackToGet) {
  Router router = MakeRouter();
  RouteMatch match = router.Match("HEAD", "/v1/executables/k");
  ASSERT_EQ(match.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(match.route->method, "GET");
  EXPECT_EQ(router.Match("HEAD", "/v1/compile").kind, RouteMatch::Kind::kMethodNotAllowed);
}

TEST(RouterTest, BadCaptureEscapeIsBadPath) {
  Router router = MakeRouter();
  RouteMatch match = router.Match("GET", "/v1/executables/%zz");
  EXPECT_EQ(match.kind, RouteMatch::Kind::kBadPath);
  EXPECT_FALSE(match.error.empty());
}

TEST(RouterTest, RejectsMalformedAndDuplicatePatterns) {
  Router router = MakeRouter();
  EXPECT_FALSE(router.Add("GET", "healthz", Noop()));
  EXPECT_FALSE(router.Add("GET", "/a//b", Noop()));
  EXPECT_FALSE(router.Add("GET", "/a/{b", Noop()));
  EXPECT_FALSE(router.Add("GET", "/a/x{b}", Noop()));
  Status duplicate = router.Add("GET", "/healthz", Noop());
  ASSERT_FALSE(duplicate);
  EXPECT_NE(duplicate.error().message.find("twice"), std::string::npos);
  EXPECT_TRUE(router.Add("GET", "/", Noop()));
  EXPECT_EQ(router.Match("GET", "/").kind, RouteMatch::Kind::kFound);
}

TEST(RouterTest, DeclaresContractsOnRegisteredRoutesOnly) {
  Router router = MakeRouter();
  ASSERT_TRUE(router.Declare("POST", "/v1/compile", RequestContract{.query = {"chip"}}));
  RouteMatch match = router.Match("POST", "/v1/compile");
  ASSERT_EQ(match.kind, RouteMatch::Kind::kFound);
  ASSERT_TRUE(match.route->contract);
  EXPECT_EQ(match.route->contract->query, std::vector<std::string>{"chip"});
  EXPECT_FALSE(router.Match("GET", "/healthz").route->contract);
  Status missing = router.Declare("PUT", "/v1/compile", RequestContract{});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("PUT /v1/compile is not registered"), std::string::npos);
}

}  // namespace
}  // namespace kiln::http
