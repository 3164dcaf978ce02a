// Errors as values for the HLO front end and everything built on it.
//
// An Error is a message meant for a person ("file:line:col: expected ']'").
// Result<T> is std::expected<T, Error>; functions return early on error.
// Values are plain data: copyable, thread-compatible.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace kiln {

struct Error {
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

// Result<void> with the usual spelling.
using Status = std::expected<void, Error>;

inline std::unexpected<Error> MakeError(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

inline Status Ok() { return {}; }

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
