#include "server/service/service_errors.h"

#include <gtest/gtest.h>

#include <string>

#include "cache/storage_problem.h"
#include "server/http/error_status.h"
#include "server/service/compile_failure.h"

namespace kiln::api {
namespace {

TEST(StorageFailureTest, AStorageProblemKeepsItsCodeReasonAndStatus) {
  Error full = service::StorageFailure(
      "delete", ResourceExhaustedError("the disk is full").WithReason(std::string(cache::kStorageFull)));
  EXPECT_EQ(full.ReasonOrCodeName(), cache::kStorageFull);
  EXPECT_EQ(http::HttpStatusOf(full), 507);
  EXPECT_NE(full.ToString().find("delete"), std::string::npos) << full.ToString();

  Error busy = service::StorageFailure(
      "delete", UnavailableError("locked").WithReason(std::string(cache::kStoreBusy)).RetryAfter(1));
  EXPECT_EQ(http::HttpStatusOf(busy), 503);
  EXPECT_EQ(busy.details().retry_after_seconds, 1);
}

TEST(StorageFailureTest, AnEntryInUseIsAConflictToRetryNotABug) {
  Error in_use = service::StorageFailure("delete", FailedPreconditionError("entry in use")
                                              .WithReason(std::string(cache::kEntryInUse))
                                              .RetryAfter(1));
  EXPECT_EQ(in_use.code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(in_use.ReasonOrCodeName(), cache::kEntryInUse);
  EXPECT_EQ(http::HttpStatusOf(in_use), 409);
  EXPECT_EQ(in_use.details().retry_after_seconds, 1);
}

TEST(StorageFailureTest, AnyOtherFailureIsInternal) {
  Error other = service::StorageFailure("delete", FailedPreconditionError("some other precondition"));
  EXPECT_EQ(other.code, ErrorCode::kInternal);
  EXPECT_EQ(http::HttpStatusOf(other), 500);
  EXPECT_NE(other.ToString().find("some other precondition"), std::string::npos) << other.ToString();
}

// What a client's retry logic reads from a compile failure: 422 for a
// program that cannot be compiled as given, 501 for what kiln does not
// support, 500 for kiln's own fault.
TEST(CompileFailureStatusTest, EachKindOfCompileFailureHasItsStatus) {
  struct Case {
    Error compiler_error;
    std::string_view reason;
    int status;
  };
  const Case cases[] = {
      {ResourceExhaustedError("program needs 88 GB of HBM at peak"), "does_not_fit", 422},
      {ResourceExhaustedError("tile needs 300 MiB of VMEM"), "does_not_fit", 422},
      {UnimplementedError("resharding f32[8]"), "unsupported", 501},
      {InternalError("slot assigned twice"), "internal", 500},
      {InvalidArgumentError("dot has no contracting dimension"), "compile_failed", 422},
      {InvalidArgumentError("replica group leaves out device 2").WithReason("invalid_collective"), "invalid_collective", 422},
      {InvalidArgumentError("program is 2 GiB").WithReason("program_too_large"), "program_too_large", 422},
      {InvalidArgumentError("4 devices, topology 2x1").WithReason("topology_mismatch"), "topology_mismatch", 422},
  };
  for (const Case& c : cases) {
    Error answer = service::CompileFailure(c.compiler_error);
    EXPECT_EQ(answer.ReasonOrCodeName(), c.reason) << c.compiler_error;
    EXPECT_EQ(http::HttpStatusOf(answer), c.status) << c.compiler_error;
  }
}

}  // namespace
}  // namespace kiln::api
