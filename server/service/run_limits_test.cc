#include "server/service/run_limits.h"

#include <gtest/gtest.h>

namespace kiln::service {
namespace {

using runtime::pool::JobEnd;
using std::chrono::milliseconds;

TEST(RunLimitsTest, DeadlineAnswerSaysHowLongAndWhere) {
  EndedRun run{.key = "k",
               .device = "v5e:1",
               .timeout = milliseconds(1500),
               .queued_seconds = 0.25,
               .run_seconds = 1.25,
               .error = DeadlineExceededError("kernel 0 (loop): stopped (deadline exceeded) in while loop %w")};
  Error error = EndedRunError(JobEnd::kDeadline, run);
  EXPECT_EQ(error.code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(error.ReasonOrCodeName(), "deadline_exceeded");
  EXPECT_EQ(error.message,
            "execution of k exceeded its 1.5 s deadline: it waited 0.25 s in the queue, then ran 1.25 s on "
            "v5e:1; stopped in kernel 0 (loop) in while loop %w");

  run.device.clear();  // it never left the queue
  run.run_seconds = 0;
  run.error = DeadlineExceededError("deadline passed after 1.50 s in the queue");
  error = EndedRunError(JobEnd::kDeadline, run);
  EXPECT_EQ(error.message, "execution of k exceeded its 1.5 s deadline: it waited 0.25 s in the queue and never ran");
}

TEST(RunLimitsTest, OtherEndsMapToTheirStatuses) {
  const EndedRun run{.key = "k", .error = InternalError("why")};
  EXPECT_EQ(EndedRunError(JobEnd::kCancelled, run).ReasonOrCodeName(), "client_closed_request");
  Error draining = EndedRunError(JobEnd::kShutdown, run);
  EXPECT_EQ(draining.code, ErrorCode::kUnavailable);
  EXPECT_EQ(draining.ReasonOrCodeName(), "draining");
  EXPECT_EQ(draining.details().retry_after_seconds, 1);
  Error busy = EndedRunError(JobEnd::kMemoryBusy, run);
  EXPECT_EQ(busy.code, ErrorCode::kUnavailable);
  EXPECT_EQ(busy.ReasonOrCodeName(), "host_memory_busy");
  EXPECT_GT(busy.details().retry_after_seconds, 0);
  EXPECT_EQ(EndedRunError(JobEnd::kFailed, run).message, "running k: why");
  // A failed run keeps its own code; its reason (422 at the API) says it ran and failed.
  const EndedRun runaway{.key = "k", .error = ResourceExhaustedError("step budget of 10 exhausted")};
  Error failed = EndedRunError(JobEnd::kFailed, runaway);
  EXPECT_EQ(failed.code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(failed.ReasonOrCodeName(), "execution_failed");

  namespace pool = runtime::pool;
  Error too_large = ResourceExhaustedError("needs 8 GiB").WithReason(std::string(pool::kTooLargeToRun));
  Error refused = RefusedRunError(too_large, "k", "v5e", "v5e:1");
  EXPECT_EQ(refused.code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(refused.ReasonOrCodeName(), "too_large_to_run");
  Error saturated = UnavailableError("full").WithReason(std::string(pool::kPoolSaturated));
  EXPECT_EQ(RefusedRunError(saturated, "k", "v5e", "v5e:1").ReasonOrCodeName(), "pool_saturated");
  Error no_chip = FailedPreconditionError("none").WithReason(std::string(pool::kChipNotInPool));
  Error missing = RefusedRunError(no_chip, "k", "v6e", "v5e:1");
  EXPECT_EQ(missing.code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(missing.ReasonOrCodeName(), "chip_not_in_pool");
}

}  // namespace
}  // namespace kiln::service
