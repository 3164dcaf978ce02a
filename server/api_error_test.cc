#include "server/api_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln::server {
namespace {

TEST(ApiErrorTest, ParseErrorsCarryLineAndColumn) {
  ApiError error = HloParseError("<hlo>:3:13: expected ',' or ']' in dimensions, got '3'");
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.code, "hlo_parse_error");
  EXPECT_EQ(error.line, 3);
  EXPECT_EQ(error.column, 13);
  EXPECT_EQ(error.message, "3:13: expected ',' or ']' in dimensions, got '3'");
  ApiError unplaced = HloParseError("<hlo>: input larger than 4 GiB");
  EXPECT_FALSE(unplaced.line);
}

TEST(ApiErrorTest, VerifyErrorsMoveTheLineToTheFront) {
  ApiError error = HloVerifyError("instruction %n in computation %e (line 4): shape mismatch");
  EXPECT_EQ(error.code, "hlo_verify_error");
  EXPECT_EQ(error.line, 4);
  EXPECT_FALSE(error.column);
  EXPECT_EQ(error.message, "4: instruction %n in computation %e: shape mismatch");
}

TEST(ApiErrorTest, ResponseShape) {
  ApiError error{.status = 503, .code = "pool_saturated", .message = "full", .retry_after_seconds = 2};
  error.parameter = "1";
  http::Response response = ErrorToResponse(error);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "2");
  nlohmann::json body = nlohmann::json::parse(response.body_view());
  EXPECT_EQ(body["error"]["code"], "pool_saturated");
  EXPECT_EQ(body["error"]["parameter"], "1");
  EXPECT_FALSE(body["error"].contains("line"));
}

}  // namespace
}  // namespace kiln::server
