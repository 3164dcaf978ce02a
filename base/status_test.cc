#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <sstream>
#include <vector>

namespace kiln {
namespace {

Result<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgumentError(std::to_string(n) + " is odd").WithReason("odd");
  return n / 2;
}

Status CheckPositive(int n) {
  if (n <= 0) return OutOfRangeError("not positive");
  return Ok();
}

Result<int> Quarter(int n) {
  KILN_ASSIGN_OR_RETURN(int half, Half(n));
  KILN_RETURN_IF_ERROR(CheckPositive(half));
  return Half(half);
}

TEST(StatusTest, EachCodeHasItsConstructorAndAStableName) {
  const std::vector<std::pair<Error, std::string_view>> cases = {
      {InvalidArgumentError("m"), "invalid_argument"},   {NotFoundError("m"), "not_found"},
      {AlreadyExistsError("m"), "already_exists"},       {PermissionDeniedError("m"), "permission_denied"},
      {UnauthenticatedError("m"), "unauthenticated"},    {ResourceExhaustedError("m"), "resource_exhausted"},
      {FailedPreconditionError("m"), "failed_precondition"}, {AbortedError("m"), "aborted"},
      {OutOfRangeError("m"), "out_of_range"},            {UnimplementedError("m"), "unimplemented"},
      {UnavailableError("m"), "unavailable"},            {DataLossError("m"), "data_loss"},
      {DeadlineExceededError("m"), "deadline_exceeded"}, {CancelledError("m"), "cancelled"},
      {InternalError("m"), "internal"},
  };
  for (const auto& [error, name] : cases) {
    EXPECT_EQ(ErrorCodeName(error.code), name);
    EXPECT_EQ(error.ReasonOrCodeName(), name) << "no reason: the code's name";
    EXPECT_EQ(error.message, "m");
  }
}

TEST(StatusTest, AnErrorIsReturnedAsAnyResultAndPropagatesWithItsCode) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> odd = Quarter(6);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(odd.error().ReasonOrCodeName(), "odd");
  EXPECT_EQ(odd.error().message, "3 is odd");
  Result<int> negative = Quarter(-4);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code, ErrorCode::kOutOfRange);
  Status status = InternalError("bug");
  EXPECT_EQ(status.error().code, ErrorCode::kInternal);
}

TEST(StatusTest, AParseErrorRendersFileLineAndColumnBeforeTheMessage) {
  Error error = InvalidArgumentError("expected ']'").At({.file = "m.hlo", .line = 3, .column = 13});
  EXPECT_EQ(error.message, "expected ']'");
  EXPECT_EQ(error.where().line, 3);
  EXPECT_EQ(error.where().column, 13);
  EXPECT_EQ(error.ToString(), "m.hlo:3:13: expected ']'");
  EXPECT_EQ(InvalidArgumentError("x").At({.line = 2, .column = 5}).ToString(), "2:5: x");
  EXPECT_EQ(InvalidArgumentError("x").At({.file = "m.hlo", .line = 2}).ToString(), "m.hlo:2: x");
  EXPECT_EQ(InvalidArgumentError("too big").At({.file = "m.hlo"}).ToString(), "m.hlo: too big");
}

TEST(StatusTest, ANamedPlaceRendersItsLineInParentheses) {
  Error error = InvalidArgumentError("shape mismatch").At({.line = 4, .subject = "instruction %n in computation %e"});
  EXPECT_EQ(error.ToString(), "instruction %n in computation %e (line 4): shape mismatch");
  EXPECT_EQ(InvalidArgumentError("bad").At({.subject = "instruction %n"}).ToString(), "instruction %n: bad");
}

TEST(StatusTest, ContextIsPrefixedAndKeepsCodePlaceReasonAndDetails) {
  Error plain = DataLossError("checksum mismatch").WithReason("corrupt").RetryAfter(3);
  plain.WithContext("entry 7").WithContext("verify");
  EXPECT_EQ(plain.message, "verify: entry 7: checksum mismatch");
  EXPECT_EQ(plain.ToString(), "verify: entry 7: checksum mismatch");
  EXPECT_EQ(plain.code, ErrorCode::kDataLoss);
  EXPECT_EQ(plain.reason(), "corrupt");
  EXPECT_EQ(plain.details().retry_after_seconds, 3);

  Error placed = InvalidArgumentError("result shape differs")
                     .At({.line = 18, .subject = "instruction %r in computation %c"})
                     .WithContext("verification failed")
                     .WithContext("m.hlo");
  EXPECT_EQ(placed.message, "result shape differs") << "the text after the place stays apart";
  EXPECT_EQ(placed.where().line, 18);
  EXPECT_EQ(placed.ToString(),
            "m.hlo: verification failed: instruction %r in computation %c (line 18): result shape differs");
}

TEST(StatusTest, DetailsAreTyped) {
  Error error = InvalidArgumentError("input '1' is f32[3]").ForParameter("1").ExpectedGot("f32[2]", "f32[3]");
  EXPECT_EQ(error.details().parameter, "1");
  EXPECT_EQ(error.details().expected, "f32[2]");
  EXPECT_EQ(error.details().got, "f32[3]");
  Error unknown = UnauthenticatedError("who?").WithChallenge("Bearer realm=\"kiln\"");
  EXPECT_EQ(unknown.details().challenge, "Bearer realm=\"kiln\"");
  EXPECT_FALSE(InternalError("x").details().parameter.has_value());
}

TEST(StatusTest, CopiesCarryEverythingAndAreIndependent) {
  Error original = UnavailableError("queue full").WithReason("pool_saturated").RetryAfter(2).At({.file = "m.hlo", .line = 4});
  Error copy = original;
  EXPECT_EQ(copy.ToString(), original.ToString());
  EXPECT_EQ(copy.reason(), "pool_saturated");
  EXPECT_EQ(copy.details().retry_after_seconds, 2);
  copy.WithReason("other").RetryAfter(9);
  EXPECT_EQ(original.reason(), "pool_saturated");
  EXPECT_EQ(original.details().retry_after_seconds, 2);
  Error assigned = InternalError("x");
  assigned = original;
  EXPECT_EQ(assigned.where().line, 4);
  Error moved = std::move(assigned);
  EXPECT_EQ(moved.ToString(), "m.hlo:4: queue full");
  // A plain error has empty parts, not a crash.
  const Error plain = NotFoundError("gone");
  EXPECT_TRUE(plain.where().empty());
  EXPECT_TRUE(plain.reason().empty());
  EXPECT_EQ(plain.ReasonOrCodeName(), "not_found");
}

// Every Result<T> carries an Error inline; a large one costs stack in each
// frame of a deep recursion (the evaluator's nested calls), so it stays a
// code, a message and a pointer.
static_assert(sizeof(Error) <= sizeof(std::string) + 2 * sizeof(void*));
static_assert(sizeof(Status) <= sizeof(Error) + sizeof(void*));

TEST(StatusTest, AFailedSystemCallIsCodedAfterItsErrno) {
  EXPECT_EQ(ErrnoError(ENOENT, "m").code, ErrorCode::kNotFound);
  EXPECT_EQ(ErrnoError(EACCES, "m").code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(ErrnoError(ENOSPC, "m").code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(ErrnoError(EADDRINUSE, "m").code, ErrorCode::kUnavailable);
  EXPECT_EQ(ErrnoError(EIO, "disk").code, ErrorCode::kDataLoss);
  EXPECT_EQ(ErrnoError(0, "m").code, ErrorCode::kInternal);
  EXPECT_EQ(ErrnoError(ENOENT, "a: No such file").message, "a: No such file");
}

TEST(StatusTest, StreamsTheTextForPeople) {
  std::ostringstream out;
  out << NotFoundError("no such key").At({.file = "k"});
  EXPECT_EQ(out.str(), "k: no such key");
}

}  // namespace
}  // namespace kiln
