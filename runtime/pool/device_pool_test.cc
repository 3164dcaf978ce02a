#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/host_cores.h"
#include "runtime/pool/device_pool.h"
#include "runtime/pool/pool_test_util.h"

namespace kiln::runtime::pool {
namespace {

TEST(DevicePoolTest, FloodingClientDoesNotStarveOthers) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate gate;
  ASSERT_TRUE((*pool)->Submit(gate.Hold(done)));
  while (!(*pool)->status().chips[0].busy) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*pool)->Submit(Sleeper("A", 0, 1e-3, done.Callback("A"))));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*pool)->Submit(Sleeper("B", 0, 1e-3, done.Callback("B"))));
  PoolStatus queued = (*pool)->status();
  EXPECT_EQ(queued.queued, 105u);
  EXPECT_EQ(queued.queued_by_client["A"], 100u);
  EXPECT_EQ(queued.queued_by_client["B"], 5u);
  EXPECT_TRUE(queued.chips[0].busy);
  gate.release.set_value();
  done.WaitFor(106);
  std::vector<std::string> order = done.order();
  size_t last_b = 0, last_a = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == "B") last_b = i;
    if (order[i] == "A") last_a = i;
  }
  // Round-robin: B's five jobs alternate with A's first ones.
  EXPECT_LE(last_b, 11u);
  EXPECT_EQ(last_a, 105u);
}

// A running job holds a host core (base/host_cores.h), so its kernels
// borrow only cores no other chip's job holds; the core is given back when
// the job ends.
TEST(DevicePoolTest, ARunningJobHoldsAHostCore) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  HostCores& cores = HostCores::Get();
  const int before = cores.in_use();
  std::atomic<int> during{-1};
  Completions done;
  Job job = Sleeper("a", 0, 1e-3, done.Callback("job"));
  job.run = [&](const ChipContext&) -> Result<double> {
    during = HostCores::Get().in_use();
    return 1e-3;
  };
  ASSERT_TRUE((*pool)->Submit(std::move(job)));
  done.WaitFor(1);
  EXPECT_EQ(during.load(), before + 1);
  EXPECT_EQ(cores.in_use(), before);
}

TEST(DevicePoolTest, HbmOverflowIsAnErrorAndFreesTheChip) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::atomic<bool> ran{false};
  Job big = Sleeper("a", 0, 1, done.Callback("big"));
  big.hbm_bytes = 17'000'000'000ULL;  // v5e has 16 GB
  big.run = [&](const ChipContext&) -> Result<double> {
    ran = true;
    return 1.0;
  };
  ASSERT_TRUE((*pool)->Submit(std::move(big)));
  Job small = Sleeper("a", 0, 2e-3, done.Callback("small"));
  small.hbm_bytes = 1'000'000'000ULL;
  ASSERT_TRUE((*pool)->Submit(std::move(small)));
  done.WaitFor(2);
  EXPECT_FALSE(ran);
  std::vector<std::string> errors = done.errors();
  EXPECT_NE(errors[0].find("HBM"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("17.00 GB"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], "");
  PoolStatus s = (*pool)->status();
  EXPECT_FALSE(s.chips[0].busy);
  EXPECT_EQ(s.chips[0].jobs_run, 2u);
  EXPECT_EQ(s.chips[0].jobs_failed, 1u);
  EXPECT_DOUBLE_EQ(s.chips[0].device_seconds, 2e-3);
}

TEST(DevicePoolTest, JobErrorsAndExceptionsAreDeliveredAndFreeTheChip) {
  auto pool = DevicePool::Create("v5e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Job runaway = Sleeper("a", 0, 0, done.Callback("runaway"));
  runaway.run = [](const ChipContext&) -> Result<double> {
    return ResourceExhaustedError("while loop %w exceeded the step budget");
  };
  Job throws = Sleeper("a", 0, 0, done.Callback("throws"));
  throws.run = [](const ChipContext&) -> Result<double> { throw std::runtime_error("boom"); };
  ASSERT_TRUE((*pool)->Submit(std::move(runaway)));
  ASSERT_TRUE((*pool)->Submit(std::move(throws)));
  ASSERT_TRUE((*pool)->Submit(Sleeper("a", 0, 0, done.Callback("after"))));
  done.WaitFor(3);
  std::vector<std::string> errors = done.errors();
  EXPECT_NE(errors[0].find("step budget"), std::string::npos);
  EXPECT_NE(errors[1].find("boom"), std::string::npos);
  EXPECT_EQ(errors[2], "");
}

TEST(DevicePoolTest, RoutesJobsToTheRequestedChipKind) {
  auto pool = DevicePool::Create("v5e:2,v6e:1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::mutex mu;
  std::vector<std::string> kinds;
  for (int i = 0; i < 6; ++i) {
    Job job = Sleeper("c", 0, 0, done.Callback("job"));
    job.chip_kind = i % 2 == 0 ? "v6e" : "V5E";
    std::string want = i % 2 == 0 ? "v6e" : "v5e";
    job.run = [&, want](const ChipContext& chip) -> Result<double> {
      std::lock_guard<std::mutex> lock(mu);
      kinds.push_back(std::string(chip.chip->name) + "/" + want);
      return 0.0;
    };
    ASSERT_TRUE((*pool)->Submit(std::move(job)));
  }
  done.WaitFor(6);
  for (const std::string& k : kinds) EXPECT_EQ(k.substr(0, 3), k.substr(4)) << k;
  Job tpu7x = Sleeper("c", 0, 0, done.Callback("x"));
  tpu7x.chip_kind = "tpu7x";
  auto refused = (*pool)->Submit(std::move(tpu7x));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no tpu7x chips"), std::string::npos);
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(refused.error().reason(), kChipNotInPool);
}

TEST(DevicePoolTest, BoundedQueueRefusesWhenSaturated) {
  auto pool = DevicePool::Create("v5e:1", PoolOptions{3});
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Gate gate;
  ASSERT_TRUE((*pool)->Submit(gate.Hold(done)));
  // Wait until the gate job occupies the chip, so the queue holds only ours.
  while (!(*pool)->status().chips[0].busy) std::this_thread::yield();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*pool)->Submit(Sleeper("a", 0, 0, done.Callback("a"))));
  auto refused = (*pool)->Submit(Sleeper("a", 0, 0, done.Callback("refused")));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("pool saturated"), std::string::npos);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().reason(), kPoolSaturated);
  gate.release.set_value();
  done.WaitFor(4);
  EXPECT_EQ(done.order().size(), 4u);
}

TEST(DevicePoolTest, ReportsUtilizationAndDeviceTime) {
  auto pool = DevicePool::Create("v5e:2");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*pool)->Submit(Sleeper("a", 20, 0.5, done.Callback("a"))));
  done.WaitFor(4);
  PoolStatus s = (*pool)->status();
  ASSERT_EQ(s.chips.size(), 2u);
  double busy = 0, device = 0;
  uint64_t jobs = 0;
  for (const ChipStatus& c : s.chips) {
    busy += c.busy_seconds;
    device += c.device_seconds;
    jobs += c.jobs_run;
    EXPECT_GE(c.utilization, 0.0);
    EXPECT_LE(c.utilization, 1.0);
    EXPECT_FALSE(c.busy);
  }
  EXPECT_EQ(jobs, 4u);
  EXPECT_DOUBLE_EQ(device, 2.0);
  EXPECT_GE(busy, 4 * 0.020);  // each job slept 20 ms on its chip
  EXPECT_LE(busy, 2 * s.uptime_seconds);
  EXPECT_GT(s.utilization, 0.0);
  for (const JobStats& st : done.stats()) {
    EXPECT_GE(st.chip, 0);
    EXPECT_GE(st.run_seconds, 0.020);
  }
}

TEST(DevicePoolTest, StatusNamesEachChipsPlaceInItsKindTheRunningJobAndTheQueueByKind) {
  auto pool = DevicePool::Create("v5e:1,v6e:2");
  ASSERT_TRUE(pool) << pool.error().message;
  PoolStatus idle = (*pool)->status();
  ASSERT_EQ(idle.chips.size(), 3u);
  EXPECT_EQ(idle.chips[0].kind_index, 0);
  EXPECT_EQ(idle.chips[1].kind_index, 0) << "the first v6e";
  EXPECT_EQ(idle.chips[2].kind_index, 1);
  Completions done;
  Gate gate;
  Job held = gate.Hold(done);
  held.chip_kind = "v5e";
  held.label = "key-a";
  ASSERT_TRUE((*pool)->Submit(std::move(held)));
  while (!(*pool)->status().chips[0].busy) std::this_thread::yield();
  for (int i = 0; i < 2; ++i) {
    Job waiting = Sleeper("b", 0, 0, done.Callback("b"));
    waiting.chip_kind = "v5e";
    ASSERT_TRUE((*pool)->Submit(std::move(waiting)));
  }
  PoolStatus busy = (*pool)->status();
  EXPECT_EQ(busy.chips[0].label, "key-a");
  EXPECT_EQ(busy.queued_by_kind["v5e"], 2u);
  EXPECT_EQ(busy.queued_by_kind.count("v6e"), 0u);
  gate.release.set_value();
  done.WaitFor(3);
  PoolStatus after = (*pool)->status();
  EXPECT_TRUE(after.chips[0].label.empty());
  EXPECT_TRUE(after.queued_by_kind.empty());
}

TEST(DevicePoolTest, ShutdownCompletesQueuedJobsWithAnError) {
  Completions done;
  Gate gate;
  std::once_flag opened;
  {
    auto pool = DevicePool::Create("v5e:1");
    ASSERT_TRUE(pool) << pool.error().message;
    ASSERT_TRUE((*pool)->Submit(gate.Hold(done)));
    while (!(*pool)->status().chips[0].busy) std::this_thread::yield();
    auto record = done.Callback("a");
    for (int i = 0; i < 3; ++i) {
      // The running job is released only once shutdown has failed a queued
      // one, so none of them can run.
      ASSERT_TRUE((*pool)->Submit(Sleeper("a", 0, 0, [&, record](Status s, const JobStats& st) {
        record(std::move(s), st);
        std::call_once(opened, [&] { gate.release.set_value(); });
      })));
    }
    pool->reset();
  }
  done.WaitFor(4);
  std::vector<std::string> order = done.order();
  std::vector<std::string> errors = done.errors();
  ASSERT_EQ(order.size(), 4u);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == "a") {
      EXPECT_NE(errors[i].find("shutting down"), std::string::npos) << errors[i];
    } else {
      EXPECT_EQ(errors[i], "");
    }
  }
}

}  // namespace
}  // namespace kiln::runtime::pool
