#include "server/http/error_status.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::http {
namespace {

Error Coded(ErrorCode code, std::string reason = "") { return Error::Coded(code, "m").WithReason(std::move(reason)); }

TEST(ErrorStatusTest, EachCodeHasItsStatus) {
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kInvalidArgument)), 400);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kOutOfRange)), 400);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kUnauthenticated)), 401);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kPermissionDenied)), 403);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kNotFound)), 404);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kAlreadyExists)), 409);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kFailedPrecondition)), 409);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kAborted)), 409);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kResourceExhausted)), 413);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kCancelled)), 499);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kInternal)), 500);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kDataLoss)), 500);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kUnimplemented)), 501);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kUnavailable)), 503);
  EXPECT_EQ(HttpStatusOf(Coded(ErrorCode::kDeadlineExceeded)), 504);
}

// The API codes of schema/openapi.yaml (its Error schema lists each with its
// status), made as kiln makes them.
TEST(ErrorStatusTest, EveryApiCodeAnswersTheSpecsStatus) {
  const struct {
    ErrorCode code;
    const char* reason;
    int status;
  } cases[] = {
      {ErrorCode::kInvalidArgument, "bad_request", 400},
      {ErrorCode::kInvalidArgument, "hlo_parse_error", 400},
      {ErrorCode::kInvalidArgument, "invalid_query", 400},
      {ErrorCode::kUnauthenticated, "unauthorized", 401},
      {ErrorCode::kPermissionDenied, "forbidden", 403},
      {ErrorCode::kNotFound, "", 404},
      {ErrorCode::kUnimplemented, "method_not_allowed", 405},
      {ErrorCode::kDeadlineExceeded, "request_timeout", 408},
      {ErrorCode::kFailedPrecondition, "chip_not_in_pool", 409},
      {ErrorCode::kResourceExhausted, "payload_too_large", 413},
      {ErrorCode::kResourceExhausted, "too_large_to_run", 413},
      {ErrorCode::kInvalidArgument, "unsupported_media_type", 415},
      {ErrorCode::kUnimplemented, "unsupported_content_encoding", 415},
      {ErrorCode::kFailedPrecondition, "expectation_failed", 417},
      {ErrorCode::kInvalidArgument, "input_mismatch", 422},
      {ErrorCode::kUnimplemented, "compile_failed", 422},
      {ErrorCode::kResourceExhausted, "compile_failed", 422},
      {ErrorCode::kInternal, "execution_failed", 422},
      {ErrorCode::kUnimplemented, "unsupported_output", 422},
      {ErrorCode::kResourceExhausted, "headers_too_large", 431},
      {ErrorCode::kCancelled, "client_closed_request", 499},
      {ErrorCode::kInternal, "", 500},
      {ErrorCode::kUnimplemented, "not_implemented", 501},
      {ErrorCode::kUnavailable, "overloaded", 503},
      {ErrorCode::kUnavailable, "pool_saturated", 503},
      {ErrorCode::kUnavailable, "draining", 503},
      {ErrorCode::kUnavailable, "host_memory_busy", 503},
      {ErrorCode::kUnavailable, "read_only_store", 503},
      {ErrorCode::kDeadlineExceeded, "deadline_exceeded", 504},
      {ErrorCode::kResourceExhausted, "insufficient_storage", 507},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(HttpStatusOf(Coded(c.code, c.reason)), c.status) << ErrorCodeName(c.code) << " " << c.reason;
  }
}

}  // namespace
}  // namespace kiln::http
