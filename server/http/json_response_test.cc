#include "server/http/json_response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln::http {
namespace {

nlohmann::json ErrorBody(const Response& response) { return nlohmann::json::parse(response.body_view())["error"]; }

TEST(JsonResponseTest, ErrorHasCodeAndMessageAndTheStatusOfItsCodes) {
  Response response =
      ErrorResponse(ResourceExhaustedError("body \"x\" is 5 bytes over").WithReason("payload_too_large"));
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_FALSE(response.compressible);
  nlohmann::json error = ErrorBody(response);
  EXPECT_EQ(error["code"], "payload_too_large");
  EXPECT_EQ(error["message"], "body \"x\" is 5 bytes over");
  EXPECT_EQ(ErrorBody(ErrorResponse(InternalError("bug")))["code"], "internal") << "no reason: the code's name";
}

TEST(JsonResponseTest, InvalidUtf8InAMessageDoesNotFail) {
  Response response = ErrorResponse(NotFoundError("no route for /\xff\xfe"));
  EXPECT_TRUE(nlohmann::json::accept(response.body_view()));
}

TEST(JsonResponseTest, AnErrorPlacedInTheHloTextGivesLineAndColumnFirst) {
  Error parse = InvalidArgumentError("expected ',' or ']' in dimensions, got '3'")
                    .At({.file = "<hlo>", .line = 3, .column = 13})
                    .WithReason("hlo_parse_error");
  nlohmann::json error = ErrorBody(ErrorResponse(parse));
  EXPECT_EQ(error["code"], "hlo_parse_error");
  EXPECT_EQ(error["line"], 3);
  EXPECT_EQ(error["column"], 13);
  EXPECT_EQ(error["message"], "3:13: expected ',' or ']' in dimensions, got '3'") << "no file name";

  Error verify = InvalidArgumentError("shape mismatch")
                     .At({.line = 4, .subject = "instruction %n in computation %e"})
                     .WithReason("hlo_verify_error");
  error = ErrorBody(ErrorResponse(verify));
  EXPECT_EQ(error["line"], 4);
  EXPECT_FALSE(error.contains("column"));
  EXPECT_EQ(error["message"], "4: instruction %n in computation %e: shape mismatch");

  Error unplaced = InvalidArgumentError("input larger than 4 GiB").At({.file = "<hlo>"});
  error = ErrorBody(ErrorResponse(unplaced));
  EXPECT_FALSE(error.contains("line"));
  EXPECT_EQ(error["message"], "<hlo>: input larger than 4 GiB");
}

TEST(JsonResponseTest, DetailsBecomeFieldsAndHeaders) {
  Response mismatch = ErrorResponse(InvalidArgumentError("input '1': parameter 1 is f32[2,3], got f32[3,2]")
                                        .WithReason("input_mismatch")
                                        .ForParameter("1")
                                        .ExpectedGot("f32[2,3]", "f32[3,2]"));
  EXPECT_EQ(mismatch.status, 422);
  nlohmann::json error = ErrorBody(mismatch);
  EXPECT_EQ(error["parameter"], "1");
  EXPECT_EQ(error["expected"], "f32[2,3]");
  EXPECT_EQ(error["got"], "f32[3,2]");

  Response busy = ErrorResponse(UnavailableError("full").WithReason("pool_saturated").RetryAfter(2));
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.headers.Get("Retry-After"), "2");
  EXPECT_FALSE(ErrorBody(busy).contains("parameter"));

  Response unknown = ErrorResponse(UnauthenticatedError("who?").WithReason("unauthorized").WithChallenge("Bearer"));
  EXPECT_EQ(unknown.status, 401);
  EXPECT_EQ(unknown.headers.Get("WWW-Authenticate"), "Bearer");
  EXPECT_FALSE(unknown.headers.Has("Retry-After"));
}

}  // namespace
}  // namespace kiln::http
