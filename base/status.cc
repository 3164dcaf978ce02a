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

Error::Error(const Error& other)
    : code(other.code), message(other.message), extra_(other.extra_ ? std::make_unique<Extra>(*other.extra_) : nullptr) {}

Error& Error::operator=(const Error& other) {
  if (this == &other) return *this;
  code = other.code;
  message = other.message;
  extra_ = other.extra_ ? std::make_unique<Extra>(*other.extra_) : nullptr;
  return *this;
}

Error::~Error() = default;

Error::Extra& Error::MutableExtra() {
  if (!extra_) extra_ = std::make_unique<Extra>();
  return *extra_;
}

const SourceLocation& Error::where() const {
  static const SourceLocation kNowhere;
  return extra_ ? extra_->where : kNowhere;
}

const std::string& Error::reason() const {
  static const std::string kNone;
  return extra_ ? extra_->reason : kNone;
}

const ErrorDetails& Error::details() const {
  static const ErrorDetails kNoDetails;
  return extra_ ? extra_->details : kNoDetails;
}

const std::string& Error::context() const {
  static const std::string kNone;
  return extra_ ? extra_->context : kNone;
}

std::string Error::ToString() const {
  const SourceLocation& place = where();
  std::string text = context().empty() ? std::string() : context() + ": ";
  if (!place.subject.empty()) {
    text += place.subject;
    if (place.line > 0) text += " (" + place.PositionText() + ")";
    text += ": ";
  } else if (place.line > 0) {
    text += place.PositionText() + ": ";
  } else if (!place.file.empty()) {
    text += place.file + ": ";
  }
  return text + message;
}

std::string_view Error::ReasonOrCodeName() const {
  return reason().empty() ? ErrorCodeName(code) : std::string_view(reason());
}

Error& Error::At(SourceLocation place) & {
  MutableExtra().where = std::move(place);
  return *this;
}
Error&& Error::At(SourceLocation place) && { return std::move(At(std::move(place))); }

Error& Error::WithReason(std::string machine_code) & {
  MutableExtra().reason = std::move(machine_code);
  return *this;
}
Error&& Error::WithReason(std::string machine_code) && { return std::move(WithReason(std::move(machine_code))); }

Error& Error::RetryAfter(int seconds) & {
  MutableExtra().details.retry_after_seconds = seconds;
  return *this;
}
Error&& Error::RetryAfter(int seconds) && { return std::move(RetryAfter(seconds)); }

Error& Error::WithChallenge(std::string value) & {
  MutableExtra().details.challenge = std::move(value);
  return *this;
}
Error&& Error::WithChallenge(std::string value) && { return std::move(WithChallenge(std::move(value))); }

Error& Error::ForParameter(std::string name) & {
  MutableExtra().details.parameter = std::move(name);
  return *this;
}
Error&& Error::ForParameter(std::string name) && { return std::move(ForParameter(std::move(name))); }

Error& Error::ExpectedGot(std::string expected, std::string got) & {
  ErrorDetails& details = MutableExtra().details;
  details.expected = std::move(expected);
  details.got = std::move(got);
  return *this;
}
Error&& Error::ExpectedGot(std::string expected, std::string got) && {
  return std::move(ExpectedGot(std::move(expected), std::move(got)));
}

Error& Error::WithContext(std::string_view what) & {
  std::string& text = where().empty() ? message : MutableExtra().context;
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
