#include "server/execute_limits.h"

#include <gtest/gtest.h>

#include "server/http/error_status.h"

namespace kiln::server {
namespace {

using runtime::pool::JobEnd;
using std::chrono::milliseconds;

http::Request WithTimeout(std::optional<std::string> query, std::optional<std::string> header) {
  http::Request request;
  if (query) request.query.emplace_back("timeout", *query);
  if (header) request.headers.Add("X-Kiln-Timeout", *header);
  return request;
}

TEST(ExecuteLimitsTest, TheRequestMayLowerTheServersTimeoutButNeverRaiseIt) {
  const milliseconds server(60'000);
  EXPECT_EQ(*ExecuteTimeout(WithTimeout(std::nullopt, std::nullopt), server), server);
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("5s", std::nullopt), server), milliseconds(5000));
  EXPECT_EQ(*ExecuteTimeout(WithTimeout(std::nullopt, "250ms"), server), milliseconds(250));
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("5s", "250ms"), server), milliseconds(250)) << "the smaller wins";
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("2h", std::nullopt), server), server) << "never above the server's";

  Result<milliseconds> bad = ExecuteTimeout(WithTimeout("0", std::nullopt), server);
  ASSERT_FALSE(bad);
  EXPECT_EQ(http::HttpStatusOf(bad.error()), 400);
  EXPECT_NE(bad.error().message.find("query parameter timeout"), std::string::npos) << bad.error().message;
  bad = ExecuteTimeout(WithTimeout(std::nullopt, "soon"), server);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("header X-Kiln-Timeout"), std::string::npos) << bad.error().message;
}

TEST(ExecuteLimitsTest, DeadlineAnswerSaysHowLongAndWhere) {
  EndedRun run{.key = "k",
               .device = "v5e:1",
               .timeout = milliseconds(1500),
               .queued_seconds = 0.25,
               .run_seconds = 1.25,
               .error = DeadlineExceededError("kernel 0 (loop): stopped (deadline exceeded) in while loop %w")};
  Error error = EndedRunError(JobEnd::kDeadline, run);
  EXPECT_EQ(http::HttpStatusOf(error), 504);
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

TEST(ExecuteLimitsTest, OtherEndsMapToTheirStatuses) {
  const EndedRun run{.key = "k", .error = InternalError("why")};
  EXPECT_EQ(http::HttpStatusOf(EndedRunError(JobEnd::kCancelled, run)), 499);
  Error draining = EndedRunError(JobEnd::kShutdown, run);
  EXPECT_EQ(http::HttpStatusOf(draining), 503);
  EXPECT_EQ(draining.ReasonOrCodeName(), "draining");
  EXPECT_EQ(draining.details().retry_after_seconds, 1);
  Error busy = EndedRunError(JobEnd::kMemoryBusy, run);
  EXPECT_EQ(http::HttpStatusOf(busy), 503);
  EXPECT_EQ(busy.ReasonOrCodeName(), "host_memory_busy");
  EXPECT_GT(busy.details().retry_after_seconds, 0);
  EXPECT_EQ(EndedRunError(JobEnd::kFailed, run).message, "running k: why");
  // A failed run keeps its own code and answers 422 whatever failed inside.
  const EndedRun runaway{.key = "k", .error = ResourceExhaustedError("step budget of 10 exhausted")};
  Error failed = EndedRunError(JobEnd::kFailed, runaway);
  EXPECT_EQ(failed.code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(failed.ReasonOrCodeName(), "execution_failed");
  EXPECT_EQ(http::HttpStatusOf(failed), 422);

  namespace pool = runtime::pool;
  Error too_large = ResourceExhaustedError("needs 8 GiB").WithReason(std::string(pool::kTooLargeToRun));
  EXPECT_EQ(http::HttpStatusOf(RefusedRunError(too_large, "k", "v5e", "v5e:1")), 413);
  Error saturated = UnavailableError("full").WithReason(std::string(pool::kPoolSaturated));
  EXPECT_EQ(RefusedRunError(saturated, "k", "v5e", "v5e:1").ReasonOrCodeName(), "pool_saturated");
  Error no_chip = FailedPreconditionError("none").WithReason(std::string(pool::kChipNotInPool));
  EXPECT_EQ(http::HttpStatusOf(RefusedRunError(no_chip, "k", "v6e", "v5e:1")), 409);
}

}  // namespace
}  // namespace kiln::server
