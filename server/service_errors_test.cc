#include "server/service_errors.h"

#include <gtest/gtest.h>

#include <string>

#include "cache/storage_problem.h"
#include "server/http/error_status.h"

namespace kiln::server {
namespace {

TEST(StorageFailureTest, AStorageProblemKeepsItsCodeReasonAndStatus) {
  Error full = StorageFailure(
      "delete", ResourceExhaustedError("the disk is full").WithReason(std::string(cache::kStorageFull)));
  EXPECT_EQ(full.ReasonOrCodeName(), cache::kStorageFull);
  EXPECT_EQ(http::HttpStatusOf(full), 507);
  EXPECT_NE(full.ToString().find("delete"), std::string::npos) << full.ToString();

  Error busy = StorageFailure(
      "delete", UnavailableError("locked").WithReason(std::string(cache::kStoreBusy)).RetryAfter(1));
  EXPECT_EQ(http::HttpStatusOf(busy), 503);
  EXPECT_EQ(busy.details().retry_after_seconds, 1);
}

TEST(StorageFailureTest, AnEntryInUseIsAConflictToRetryNotABug) {
  Error in_use = StorageFailure("delete", FailedPreconditionError("entry in use")
                                              .WithReason(std::string(cache::kEntryInUse))
                                              .RetryAfter(1));
  EXPECT_EQ(in_use.code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(in_use.ReasonOrCodeName(), cache::kEntryInUse);
  EXPECT_EQ(http::HttpStatusOf(in_use), 409);
  EXPECT_EQ(in_use.details().retry_after_seconds, 1);
}

TEST(StorageFailureTest, AnyOtherFailureIsInternal) {
  Error other = StorageFailure("delete", FailedPreconditionError("some other precondition"));
  EXPECT_EQ(other.code, ErrorCode::kInternal);
  EXPECT_EQ(http::HttpStatusOf(other), 500);
  EXPECT_NE(other.ToString().find("some other precondition"), std::string::npos) << other.ToString();
}

}  // namespace
}  // namespace kiln::server
