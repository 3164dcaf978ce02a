#include "base/status.h"

#include <cerrno>
#include <ostream>

namespace kiln {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kAborted:
      return "aborted";
    case ErrorCode::kOutOfRange:
      return "out_of_range";
    case ErrorCode::kUnimplemented:
      return "unimplemented";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kDataLoss:
      return "data_loss";
    case ErrorCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kInternal:
      break;
  }
  return "internal";
}

std::string SourceLocation::PositionText() const {
  if (line <= 0) return {};
  std::string text = file.empty() ? std::string(subject.empty() ? "" : "line ") : file + ":";
  text += std::to_string(line);
  if (column > 0) {
    text += ':';
    text += std::to_string(column);
  }
  return text;
}

std::string Error::ToString() const {
  std::string text = context.empty() ? std::string() : context + ": ";
  if (!where.subject.empty()) {
    text += where.subject;
    if (where.line > 0) text += " (" + where.PositionText() + ")";
    text += ": ";
  } else if (where.line > 0) {
    text += where.PositionText() + ": ";
  } else if (!where.file.empty()) {
    text += where.file + ": ";
  }
  return text + message;
}

std::string_view Error::Reason() const { return reason.empty() ? ErrorCodeName(code) : std::string_view(reason); }

Error& Error::At(SourceLocation place) & {
  where = std::move(place);
  return *this;
}
Error&& Error::At(SourceLocation place) && { return std::move(At(std::move(place))); }

Error& Error::WithReason(std::string machine_code) & {
  reason = std::move(machine_code);
  return *this;
}
Error&& Error::WithReason(std::string machine_code) && { return std::move(WithReason(std::move(machine_code))); }

Error& Error::RetryAfter(int seconds) & {
  details.retry_after_seconds = seconds;
  return *this;
}
Error&& Error::RetryAfter(int seconds) && { return std::move(RetryAfter(seconds)); }

Error& Error::WithChallenge(std::string value) & {
  details.challenge = std::move(value);
  return *this;
}
Error&& Error::WithChallenge(std::string value) && { return std::move(WithChallenge(std::move(value))); }

Error& Error::ForParameter(std::string name) & {
  details.parameter = std::move(name);
  return *this;
}
Error&& Error::ForParameter(std::string name) && { return std::move(ForParameter(std::move(name))); }

Error& Error::ExpectedGot(std::string expected, std::string got) & {
  details.expected = std::move(expected);
  details.got = std::move(got);
  return *this;
}
Error&& Error::ExpectedGot(std::string expected, std::string got) && {
  return std::move(ExpectedGot(std::move(expected), std::move(got)));
}

Error& Error::WithContext(std::string_view what) & {
  std::string& text = where.empty() ? message : context;
  text = text.empty() ? std::string(what) : std::string(what) + ": " + text;
  return *this;
}
Error&& Error::WithContext(std::string_view what) && { return std::move(WithContext(what)); }

Error ErrnoError(int error_number, std::string message) {
  ErrorCode code = ErrorCode::kInternal;
  switch (error_number) {
    case ENOENT:
    case ENOTDIR:
      code = ErrorCode::kNotFound;
      break;
    case EEXIST:
      code = ErrorCode::kAlreadyExists;
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      code = ErrorCode::kPermissionDenied;
      break;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      code = ErrorCode::kResourceExhausted;
      break;
    case EINVAL:
    case EISDIR:
    case ENAMETOOLONG:
      code = ErrorCode::kInvalidArgument;
      break;
    case EAGAIN:
    case EBUSY:
    case EINTR:
    case EADDRINUSE:
    case ECONNREFUSED:
    case ECONNRESET:
      code = ErrorCode::kUnavailable;
      break;
    case ETIMEDOUT:
      code = ErrorCode::kDeadlineExceeded;
      break;
    case EIO:
      code = ErrorCode::kDataLoss;
      break;
    default:
      break;
  }
  return Error::Coded(code, std::move(message));
}

std::ostream& operator<<(std::ostream& out, const Error& error) { return out << error.ToString(); }

}  // namespace kiln
