// Errors as values for all of kiln.
//
// An Error says what kind of failure it is (an ErrorCode: callers branch on
// it, never on message text), what went wrong for a person (message), and
// optionally where in the input (a SourceLocation), a stable machine code
// more specific than the ErrorCode's name (reason, e.g. "hlo_parse_error"),
// and typed details an API shows (the offending input, when to retry, how
// to authenticate). Modelled on absl::Status and LevelDB's Status, held in
// std::expected: Result<T> is std::expected<T, Error>, Status is
// std::expected<void, Error>, and functions return early on error
// (KILN_RETURN_IF_ERROR, KILN_ASSIGN_OR_RETURN).
//
// An Error is made by the constructor of its code and refined with
// builder-style setters; it converts to any Result, so it is returned as is:
//
//   return InvalidArgumentError("expected ']'").At({.file = "m.hlo", .line = 3, .column = 13});
//   return UnavailableError("the v5e run queue is full").WithReason("pool_saturated").RetryAfter(1);
//   if (!run) return run.error().WithContext("pass cse");  // keeps code, place, reason, details
//
// ToString() is the text for people ("m.hlo:3:13: expected ']'"). Values are
// plain data: copyable, thread-compatible.
#pragma once

#include <cstdint>
#include <expected>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kiln {

// The kind of a failure, after absl's status codes.
enum class ErrorCode : uint8_t {
  kInvalidArgument,     // the input is malformed or breaks a rule (parse, verify, a bad flag or field)
  kNotFound,            // what was asked for does not exist
  kAlreadyExists,       // what was to be created exists
  kPermissionDenied,    // the caller is known but may not do this
  kUnauthenticated,     // the caller is not known
  kResourceExhausted,   // the request exceeds a fixed limit (size, memory, storage, a budget)
  kFailedPrecondition,  // the system is not in the state the operation needs
  kAborted,             // a conflict ended the operation; retrying it whole may succeed
  kOutOfRange,          // a value past the end of a valid range
  kUnimplemented,       // valid input kiln does not support (an op, a coding, a feature)
  kUnavailable,         // temporarily unable (saturated, draining, read-only); retrying later may succeed
  kDataLoss,            // stored or received bytes are corrupt or lost
  kDeadlineExceeded,    // the time allowed ran out
  kCancelled,           // the caller gave up
  kInternal,            // a bug: an invariant kiln relies on broke
};

// A stable snake_case name: "invalid_argument", "not_found", ...
std::string_view ErrorCodeName(ErrorCode code);

// Where in an input an error is: a position in a text and/or the named
// thing there. Every part is optional.
struct SourceLocation {
  std::string file = {};     // the input's name ("model.hlo", "<hlo>"); empty when unnamed
  int line = 0;              // 1-based; 0: no position
  int column = 0;            // 1-based; 0: unknown
  std::string subject = {};  // what is there, e.g. "instruction %dot in computation %main"

  bool empty() const { return file.empty() && line == 0 && subject.empty(); }
  // "model.hlo:3:13", "3:13", "model.hlo:3", "line 4"; empty without a line.
  std::string PositionText() const;
};

// Typed details an API shows beside the message; each is optional.
struct ErrorDetails {
  // An input that does not match what was expected: its name ("1", "0.2")
  // and, for a shape mismatch, both shapes ("f32[2,3]").
  std::optional<std::string> parameter = std::nullopt;
  std::optional<std::string> expected = std::nullopt;
  std::optional<std::string> got = std::nullopt;
  int retry_after_seconds = 0;  // > 0: retrying after this long may succeed
  std::string challenge = {};   // how to authenticate (an HTTP WWW-Authenticate value)
};

// An Error is small (a code, the message and one pointer) so that a
// Result<T> costs little stack in deep recursion: the place, reason,
// details and context live behind the pointer, allocated only when set.
class Error {
 public:
  ErrorCode code = ErrorCode::kInternal;
  // What went wrong and why, for a person. For an error with a place
  // (where()), the text that follows the place; see ToString().
  std::string message = {};

  Error() = default;
  Error(const Error& other);
  Error& operator=(const Error& other);
  Error(Error&&) noexcept = default;
  Error& operator=(Error&&) noexcept = default;
  ~Error();

  // Where in the input; empty when not placed.
  const SourceLocation& where() const;
  // A stable snake_case machine code more specific than the code's name
  // ("hlo_parse_error", "pool_saturated"); empty when none was set.
  const std::string& reason() const;
  const ErrorDetails& details() const;
  // What callers were doing when an error with a place passed them
  // ("model.hlo: verification failed"), rendered before the place. An error
  // without a place takes its context into `message` instead.
  const std::string& context() const;

  // The text for people: "[context: ]place: message", where the place is
  // "file:line:column" or "subject (line N)" (see SourceLocation).
  std::string ToString() const;
  // reason(), or the code's name when there is none.
  std::string_view ReasonOrCodeName() const;

  // Builder-style setters; each returns the error itself.
  Error& At(SourceLocation place) &;
  Error&& At(SourceLocation place) &&;
  Error& WithReason(std::string machine_code) &;
  Error&& WithReason(std::string machine_code) &&;
  Error& RetryAfter(int seconds) &;
  Error&& RetryAfter(int seconds) &&;
  Error& WithChallenge(std::string challenge) &;
  Error&& WithChallenge(std::string challenge) &&;
  // The offending input's name, and optionally both shapes.
  Error& ForParameter(std::string name) &;
  Error&& ForParameter(std::string name) &&;
  Error& ExpectedGot(std::string expected, std::string got) &;
  Error&& ExpectedGot(std::string expected, std::string got) &&;
  // Prefixes what the caller was doing: "what: <the text before>". Keeps
  // the code, place, reason and details.
  Error& WithContext(std::string_view what) &;
  Error&& WithContext(std::string_view what) &&;

  // The error of `code` with `message` and nothing else.
  static Error Coded(ErrorCode code, std::string message) {
    Error error;
    error.code = code;
    error.message = std::move(message);
    return error;
  }

  // An Error is returned as any Result's error.
  template <typename T>
  operator std::expected<T, Error>() const& {  // NOLINT: implicit by design
    return std::unexpected<Error>(*this);
  }
  template <typename T>
  operator std::expected<T, Error>() && {  // NOLINT: implicit by design
    return std::unexpected<Error>(std::move(*this));
  }

 private:
  struct Extra {
    SourceLocation where;
    std::string reason;
    ErrorDetails details;
    std::string context;
  };
  Extra& MutableExtra();

  std::unique_ptr<Extra> extra_;  // null: nothing beyond code and message
};

// Prints ToString() (for test failure messages and logs).
std::ostream& operator<<(std::ostream& out, const Error& error);

template <typename T>
using Result = std::expected<T, Error>;

// Result<void> with the usual spelling.
using Status = std::expected<void, Error>;

inline Status Ok() { return {}; }

// One constructor per code.
inline Error InvalidArgumentError(std::string message) { return Error::Coded(ErrorCode::kInvalidArgument, std::move(message)); }
inline Error NotFoundError(std::string message) { return Error::Coded(ErrorCode::kNotFound, std::move(message)); }
inline Error AlreadyExistsError(std::string message) { return Error::Coded(ErrorCode::kAlreadyExists, std::move(message)); }
inline Error PermissionDeniedError(std::string message) { return Error::Coded(ErrorCode::kPermissionDenied, std::move(message)); }
inline Error UnauthenticatedError(std::string message) { return Error::Coded(ErrorCode::kUnauthenticated, std::move(message)); }
inline Error ResourceExhaustedError(std::string message) { return Error::Coded(ErrorCode::kResourceExhausted, std::move(message)); }
inline Error FailedPreconditionError(std::string message) { return Error::Coded(ErrorCode::kFailedPrecondition, std::move(message)); }
inline Error AbortedError(std::string message) { return Error::Coded(ErrorCode::kAborted, std::move(message)); }
inline Error OutOfRangeError(std::string message) { return Error::Coded(ErrorCode::kOutOfRange, std::move(message)); }
inline Error UnimplementedError(std::string message) { return Error::Coded(ErrorCode::kUnimplemented, std::move(message)); }
inline Error UnavailableError(std::string message) { return Error::Coded(ErrorCode::kUnavailable, std::move(message)); }
inline Error DataLossError(std::string message) { return Error::Coded(ErrorCode::kDataLoss, std::move(message)); }
inline Error DeadlineExceededError(std::string message) { return Error::Coded(ErrorCode::kDeadlineExceeded, std::move(message)); }
inline Error CancelledError(std::string message) { return Error::Coded(ErrorCode::kCancelled, std::move(message)); }
inline Error InternalError(std::string message) { return Error::Coded(ErrorCode::kInternal, std::move(message)); }

// The error of a system call that failed with `error_number` (errno), coded
// after it: ENOENT not_found, EACCES permission_denied, ENOSPC
// resource_exhausted, EAGAIN unavailable, ...; internal for one not listed.
// `message` should say what failed (strerror's text included if wanted).
Error ErrnoError(int error_number, std::string message);

}  // namespace kiln

// Propagates the error of an expression returning Result<T>/Status.
#define KILN_RETURN_IF_ERROR(expr)                                   \
  do {                                                              \
    auto kiln_status_ = (expr);                                     \
    if (!kiln_status_) return std::unexpected(kiln_status_.error()); \
  } while (0)

#define KILN_CONCAT_INNER_(a, b) a##b
#define KILN_CONCAT_(a, b) KILN_CONCAT_INNER_(a, b)
// Declares `lhs` from a Result<T> expression or returns its error.
#define KILN_ASSIGN_OR_RETURN(lhs, expr)                                     \
  auto KILN_CONCAT_(kiln_result_, __LINE__) = (expr);                        \
  if (!KILN_CONCAT_(kiln_result_, __LINE__))                                 \
    return std::unexpected(KILN_CONCAT_(kiln_result_, __LINE__).error());    \
  lhs = std::move(*KILN_CONCAT_(kiln_result_, __LINE__))
