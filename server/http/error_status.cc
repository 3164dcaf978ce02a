#include "server/http/error_status.h"

#include <string_view>

namespace kiln::http {
namespace {

struct ReasonStatus {
  std::string_view reason;
  int status;
};

// API codes with a status of their own, whatever the error's code.
constexpr ReasonStatus kReasonStatuses[] = {
    {"method_not_allowed", 405},     {"request_timeout", 408},
    {"unsupported_media_type", 415}, {"unsupported_content_encoding", 415},
    {"expectation_failed", 417},     {"input_mismatch", 422},
    {"compile_failed", 422},         {"execution_failed", 422},
    {"program_too_large", 422},      {"invalid_collective", 422},
    {"tune_quota_exceeded", 429},    {"topology_mismatch", 422},
    {"timing_unavailable", 422},     {"does_not_fit", 422},
    {"unsupported_output", 422},     {"headers_too_large", 431},
    {"insufficient_storage", 507},
};

int CodeStatus(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kOutOfRange:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kFailedPrecondition:
    case ErrorCode::kAborted:
      return 409;
    case ErrorCode::kResourceExhausted:
      return 413;
    case ErrorCode::kCancelled:
      return 499;  // nginx's "client closed request"
    case ErrorCode::kUnimplemented:
      return 501;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kDeadlineExceeded:
      return 504;
    case ErrorCode::kInternal:
    case ErrorCode::kDataLoss:
      break;
  }
  return 500;
}

}  // namespace

int HttpStatusOf(const Error& error) {
  for (const ReasonStatus& row : kReasonStatuses) {
    if (row.reason == error.reason()) return row.status;
  }
  return CodeStatus(error.code);
}

}  // namespace kiln::http
