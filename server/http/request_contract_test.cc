#include "server/http/request_contract.h"

#include <gtest/gtest.h>

#include "server/http/error_status.h"

namespace kiln::http {
namespace {

const RouteName kRoute{"POST", "/v1/compile"};

RequestContract CompileLike() {
  return RequestContract{.query = {"chip", "plan", "scoped_vmem_bytes", "return"},
                         .body_types = {"text/plain", "application/json"},
                         .untyped_body = true};
}

Request WithQuery(Params query) {
  Request request;
  request.query = std::move(query);
  return request;
}

Request WithBody(std::optional<std::string> content_type, std::string body = "x") {
  Request request;
  if (content_type) request.headers.Add("Content-Type", *content_type);
  request.body = std::move(body);
  return request;
}

TEST(RequestContractTest, KnownParametersPass) {
  EXPECT_EQ(
      CheckRequestContract(CompileLike(), WithQuery({{"chip", "v6e"}, {"plan", "none"}}), kRoute),
      std::nullopt);
  EXPECT_EQ(CheckRequestContract(CompileLike(), WithQuery({}), kRoute), std::nullopt);
}

TEST(RequestContractTest, AMisspeltParameterIsNamedWithTheClosestOne) {
  std::optional<Error> error = CheckRequestContract(CompileLike(), WithQuery({{"chp", "v6e"}}), kRoute);
  ASSERT_TRUE(error);
  EXPECT_EQ(HttpStatusOf(*error), 400);
  EXPECT_EQ(error->ReasonOrCodeName(), "invalid_query");
  EXPECT_EQ(error->message,
            "unknown query parameter 'chp' for POST /v1/compile (did you mean 'chip'?); "
            "accepted: chip, plan, scoped_vmem_bytes, return");

  error = CheckRequestContract(CompileLike(), WithQuery({{"scoped_vmem_byte", "1"}}), kRoute);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("did you mean 'scoped_vmem_bytes'?"), std::string::npos);
  error = CheckRequestContract(CompileLike(), WithQuery({{"Chip", "v6e"}}), kRoute);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("did you mean 'chip'?"), std::string::npos);
}

TEST(RequestContractTest, AnUnrelatedNameGetsNoSuggestion) {
  std::optional<Error> error = CheckRequestContract(CompileLike(), WithQuery({{"x", "1"}}), kRoute);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message.find("did you mean"), std::string::npos) << error->message;
  error = CheckRequestContract(RequestContract{}, WithQuery({{"limit", "5"}}),
                               RouteName{"GET", "/v1/stats"});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message,
            "unknown query parameter 'limit' for GET /v1/stats; it takes no query parameters");
}

TEST(RequestContractTest, ARepeatedParameterIsRefused) {
  std::optional<Error> error =
      CheckRequestContract(CompileLike(), WithQuery({{"chip", "v5e"}, {"plan", "none"}, {"chip", "v6e"}}), kRoute);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->ReasonOrCodeName(), "invalid_query");
  EXPECT_EQ(error->message,
            "query parameter 'chip' is given 2 times for POST /v1/compile; give it once");
}

TEST(RequestContractTest, BodyTypesAreCheckedWithoutParametersOrCase) {
  RequestContract contract = CompileLike();
  EXPECT_EQ(CheckRequestContract(contract, WithBody("text/plain; charset=utf-8"), kRoute),
            std::nullopt);
  EXPECT_EQ(CheckRequestContract(contract, WithBody(" Application/JSON "), kRoute), std::nullopt);
  std::optional<Error> error = CheckRequestContract(contract, WithBody("image/png"), kRoute);
  ASSERT_TRUE(error);
  EXPECT_EQ(HttpStatusOf(*error), 415);
  EXPECT_EQ(error->ReasonOrCodeName(), "unsupported_media_type");
  EXPECT_EQ(error->message,
            "Content-Type 'image/png' is not accepted by POST /v1/compile; send one of "
            "text/plain, application/json");
}

TEST(RequestContractTest, AnUntypedBodyNeedsTheRoutesConsent) {
  RequestContract contract = CompileLike();
  EXPECT_EQ(CheckRequestContract(contract, WithBody(std::nullopt), kRoute), std::nullopt);
  contract.untyped_body = false;
  std::optional<Error> error = CheckRequestContract(contract, WithBody(std::nullopt), kRoute);
  ASSERT_TRUE(error);
  EXPECT_EQ(HttpStatusOf(*error), 415);
  EXPECT_EQ(error->message,
            "the body has no Content-Type; POST /v1/compile accepts text/plain, application/json");
  // No body, nothing to type: the route says what it thinks of an empty one.
  EXPECT_EQ(CheckRequestContract(contract, WithBody(std::nullopt, ""), kRoute), std::nullopt);
}

TEST(RequestContractTest, RoutesWithoutBodyTypesIgnoreContentType) {
  EXPECT_EQ(
      CheckRequestContract(RequestContract{}, WithBody("image/png"), RouteName{"GET", "/v1/stats"}),
      std::nullopt);
}

TEST(RequestContractTest, MediaTypeOf) {
  EXPECT_EQ(MediaTypeOf("Text/Plain ; charset=UTF-8"), "text/plain");
  EXPECT_EQ(MediaTypeOf(""), "");
}

}  // namespace
}  // namespace kiln::http
