// The pool's limits: deadlines, cancellation, shutdown and the host-memory
// budget. No assertion here is about elapsed time: each waits for the
// behaviour (a completion, a chip going busy) and checks how a job ended.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "runtime/pool/device_pool.h"
#include "runtime/pool/pool_test_util.h"

namespace kiln::runtime::pool {
namespace {

using std::chrono::milliseconds;

// A job that runs until the pool stops it through its interrupt (a
// runaway loop), then fails as the evaluator would.
Job Runaway(std::string client, Completions& done, std::string label, std::atomic<int>* started = nullptr) {
  Job job;
  job.client = std::move(client);
  auto interrupt = std::make_shared<Interrupt>();
  job.interrupt = interrupt;
  job.run = [interrupt, started](const ChipContext&) -> Result<double> {
    if (started != nullptr) ++*started;
    while (!interrupt->stopped()) std::this_thread::yield();
    return CancelledError("stopped (" + std::string(StopReasonText(interrupt->reason())) + ")");
  };
  job.done = done.Callback(std::move(label));
  return job;
}

// A job that records whether it ever ran.
Job Marker(std::string client, Completions& done, std::string label, std::shared_ptr<std::atomic<bool>> ran) {
  Job job = Sleeper(std::move(client), 0, 0, done.Callback(std::move(label)));
  job.run = [ran](const ChipContext&) -> Result<double> {
    *ran = true;
    return 0.0;
  };
  return job;
}

Job WithHostBytes(Job job, uint64_t bytes) {
  job.host_bytes = bytes;
  return job;
}

void WaitUntilBusy(DevicePool& pool, size_t chips) {
  while (true) {
    size_t busy = 0;
    for (const ChipStatus& chip : pool.status().chips) busy += chip.busy ? 1 : 0;
    if (busy >= chips) return;
    std::this_thread::yield();
  }
}

TEST(DevicePoolLimitsTest, QueuedJobPastItsDeadlineEndsWithoutRunning) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate gate;
  ASSERT_TRUE((*pool)->Submit(gate.Hold(done)));
  WaitUntilBusy(**pool, 1);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  Job late = Marker("a", done, "late", ran);
  late.deadline = PoolClock::now() + milliseconds(5);
  ASSERT_TRUE((*pool)->Submit(std::move(late)));
  done.WaitFor(1);  // the gate still holds the chip: only the deadline can end it
  EXPECT_EQ(done.order()[0], "late");
  EXPECT_NE(done.errors()[0].find("deadline passed"), std::string::npos) << done.errors()[0];
  EXPECT_EQ(done.codes()[0], ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(done.stats()[0].end, JobEnd::kDeadline);
  EXPECT_EQ(done.stats()[0].chip, -1);
  gate.release.set_value();
  done.WaitFor(2);
  EXPECT_FALSE(*ran);
  EXPECT_EQ((*pool)->status().deadline_total, 1u);
}

TEST(DevicePoolLimitsTest, CancelledQueuedJobIsDroppedBeforeItRuns) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate gate;
  ASSERT_TRUE((*pool)->Submit(gate.Hold(done)));
  WaitUntilBusy(**pool, 1);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  Job job = Marker("a", done, "gone", ran);
  job.cancelled = [gone] { return gone->load(); };
  ASSERT_TRUE((*pool)->Submit(std::move(job)));
  EXPECT_EQ((*pool)->status().queued, 1u);
  *gone = true;
  done.WaitFor(1);
  EXPECT_EQ(done.order()[0], "gone");
  EXPECT_EQ(done.stats()[0].end, JobEnd::kCancelled);
  EXPECT_EQ((*pool)->status().queued, 0u);
  gate.release.set_value();
  auto after = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(Marker("a", done, "after", after)));
  done.WaitFor(3);
  EXPECT_FALSE(*ran);
  EXPECT_TRUE(*after);
}

TEST(DevicePoolLimitsTest, RunningJobPastItsDeadlineIsStoppedAndFreesTheChip) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Job runaway = Runaway("a", done, "runaway");
  runaway.deadline = PoolClock::now() + milliseconds(20);
  ASSERT_TRUE((*pool)->Submit(std::move(runaway)));
  auto next = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(Marker("a", done, "next", next)));
  done.WaitFor(2);
  EXPECT_EQ(done.order(), (std::vector<std::string>{"runaway", "next"}));
  EXPECT_EQ(done.errors()[0], "stopped (deadline exceeded)");
  EXPECT_EQ(done.stats()[0].end, JobEnd::kDeadline);
  EXPECT_EQ(done.stats()[0].chip, 0);
  EXPECT_EQ(done.stats()[1].end, JobEnd::kCompleted);
  EXPECT_TRUE(*next);
}

TEST(DevicePoolLimitsTest, RunningJobWhoseClientLeftIsStopped) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::atomic<int> started{0};
  auto gone = std::make_shared<std::atomic<bool>>(false);
  Job runaway = Runaway("a", done, "runaway", &started);
  runaway.cancelled = [gone] { return gone->load(); };
  ASSERT_TRUE((*pool)->Submit(std::move(runaway)));
  while (started == 0) std::this_thread::yield();
  *gone = true;
  done.WaitFor(1);
  EXPECT_EQ(done.errors()[0], "stopped (cancelled)");
  EXPECT_EQ(done.stats()[0].end, JobEnd::kCancelled);
  EXPECT_EQ((*pool)->status().cancelled_total, 1u);
}

TEST(DevicePoolLimitsTest, ShutdownStopsRunningAndQueuedJobsAndRefusesNewOnes) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::atomic<int> started{0};
  ASSERT_TRUE((*pool)->Submit(Runaway("a", done, "running", &started)));
  while (started == 0) std::this_thread::yield();
  auto ran = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(Marker("a", done, "queued", ran)));
  (*pool)->Shutdown(PoolClock::now());
  auto refused = (*pool)->Submit(Marker("a", done, "refused", ran));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().reason(), kDraining);
  done.WaitFor(2);
  for (const JobStats& stats : done.stats()) EXPECT_EQ(stats.end, JobEnd::kShutdown);
  EXPECT_FALSE(*ran);
}

TEST(DevicePoolLimitsTest, DestroyingThePoolStopsARunawayJob) {
  Completions done;
  std::atomic<int> started{0};
  {
    auto pool = DevicePool::Create("v5e:2");
    ASSERT_TRUE(pool) << pool.error().message;
    ASSERT_TRUE((*pool)->Submit(Runaway("a", done, "a", &started)));
    ASSERT_TRUE((*pool)->Submit(Runaway("b", done, "b", &started)));
    while (started < 2) std::this_thread::yield();
  }  // would never return if the runs were not stopped
  done.WaitFor(2);
  for (const JobStats& stats : done.stats()) EXPECT_EQ(stats.end, JobEnd::kShutdown);
}

TEST(DevicePoolLimitsTest, HostMemoryBudgetAdmitsRunsThatFitAndQueuesTheRest) {
  auto pool = DevicePool::Create("v5e:3", PoolOptions{.host_memory_bytes = 100});
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate first;
  ASSERT_TRUE((*pool)->Submit(WithHostBytes(first.Hold(done), 60)));
  WaitUntilBusy(**pool, 1);

  // 60 more do not fit beside the first 60: it waits though chips are idle.
  auto b_ran = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(WithHostBytes(Marker("b", done, "b", b_ran), 60)));
  // 30 fit: this one passes the waiting job.
  auto c_ran = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(WithHostBytes(Marker("c", done, "c", c_ran), 30)));
  done.WaitFor(1);
  EXPECT_EQ(done.order()[0], "c");
  PoolStatus status = (*pool)->status();
  EXPECT_EQ(status.queued, 1u);
  EXPECT_EQ(status.waiting_for_memory, 1u);
  EXPECT_EQ(status.host_memory_in_use, 60u);
  EXPECT_EQ(status.host_memory_budget, 100u);
  EXPECT_FALSE(*b_ran);

  // More than the whole budget can never run: refused with the figures.
  auto refused = (*pool)->Submit(WithHostBytes(Marker("d", done, "huge", c_ran), uint64_t{1} << 40));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(refused.error().reason(), kTooLargeToRun);
  EXPECT_NE(refused.error().message.find("1024.00 GiB"), std::string::npos) << refused.error().message;

  first.release.set_value();
  done.WaitFor(3);
  EXPECT_TRUE(*b_ran);
  EXPECT_EQ((*pool)->status().host_memory_in_use, 0u);
  EXPECT_EQ((*pool)->status().memory_refused_total, 1u);
}

TEST(DevicePoolLimitsTest, RunThatWaitsTooLongForMemoryEndsMemoryBusy) {
  auto pool = DevicePool::Create("v5e:2", PoolOptions{.host_memory_bytes = 100, .max_memory_wait = milliseconds(5)});
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate hold;
  ASSERT_TRUE((*pool)->Submit(WithHostBytes(hold.Hold(done), 80)));
  WaitUntilBusy(**pool, 1);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE((*pool)->Submit(WithHostBytes(Marker("b", done, "b", ran), 40)));
  done.WaitFor(1);  // the gate holds its memory: only the wait limit ends b
  EXPECT_EQ(done.order()[0], "b");
  EXPECT_EQ(done.stats()[0].end, JobEnd::kMemoryBusy);
  const std::string why = done.errors()[0];
  EXPECT_NE(why.find("for host memory"), std::string::npos) << why;
  EXPECT_NE(why.find("held by 1 running job"), std::string::npos) << why;
  hold.release.set_value();
  done.WaitFor(2);
  EXPECT_FALSE(*ran);
  EXPECT_EQ((*pool)->status().memory_busy_total, 1u);
}

}  // namespace
}  // namespace kiln::runtime::pool
