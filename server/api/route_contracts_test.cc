#include "server/api/route_contracts.h"

#include <gtest/gtest.h>

#include "server/api/kiln_api.h"

namespace kiln::api {
namespace {

http::Handler Noop() {
  return [](http::Request, http::Responder) {};
}

TEST(RouteContractsTest, EveryServedRouteHasOne) {
  for (const std::string& route : KilnApi::RouteTable()) {
    size_t space = route.find(' ');
    EXPECT_NE(FindRouteContract(route.substr(0, space), route.substr(space + 1)), nullptr) << route;
  }
}

TEST(RouteContractsTest, ARouteWithoutOneFailsToRegister) {
  http::Router router;
  ASSERT_TRUE(router.Add("POST", "/v1/compile", Noop()));
  ASSERT_TRUE(router.Add("GET", "/v1/secret", Noop()));
  Status declared = DeclareRouteContracts(router);
  ASSERT_FALSE(declared);
  EXPECT_EQ(declared.error().message,
            "route GET /v1/secret has no request contract in server/route_contracts.cc");
}

TEST(RouteContractsTest, DeclaredOnTheRouter) {
  http::Router router;
  ASSERT_TRUE(router.Add("GET", "/v1/entries", Noop()));
  ASSERT_TRUE(DeclareRouteContracts(router));
  ASSERT_TRUE(router.routes().front().contract);
  EXPECT_EQ(FormatRouteContract(*router.routes().front().contract),
            "query=chip,plan,sort,limit,cursor");
}

TEST(RouteContractsTest, FormatNamesQueryBodyAndUntypedBodies) {
  const http::RequestContract* compile = FindRouteContract("POST", "/v1/compile");
  ASSERT_NE(compile, nullptr);
  EXPECT_EQ(FormatRouteContract(*compile),
            "query=chip,plan,scoped_vmem_bytes,topology,arg_shapes,return body=text/plain,application/json,"
            "application/x-www-form-urlencoded,application/octet-stream untyped-body");
  EXPECT_EQ(FormatRouteContract(*FindRouteContract("GET", "/healthz")), "");
}

}  // namespace
}  // namespace kiln::api
