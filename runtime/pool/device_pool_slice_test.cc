// Slice jobs: a job that asks for a topology gets every chip of a pool slice
// of that shape at once, only when the slice's chips have finished their
// running jobs, and keeps them until it ends.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "runtime/pool/device_pool.h"
#include "runtime/pool/pool_test_util.h"

namespace kiln::runtime::pool {
namespace {

// A one-chip job that holds its chip until `open` is ready.
Job HeldJob(std::string client, std::shared_future<void> open, std::atomic<int>& running,
            std::function<void(Status, const JobStats&)> done) {
  Job job;
  job.client = std::move(client);
  job.chip_kind = "v5e";
  job.run = [open, &running](const ChipContext&) -> Result<double> {
    ++running;
    open.wait();
    --running;
    return 1e-3;
  };
  job.done = std::move(done);
  return job;
}

void WaitUntil(const std::function<bool()>& ready) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(DevicePoolSliceTest, ASliceJobWaitsForEveryChipOfItsSliceAndHoldsThemAll) {
  auto pool = DevicePool::Create("v5e:2x2");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::promise<void> release;
  std::shared_future<void> open = release.get_future().share();
  std::atomic<int> singles_running{0};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE((*pool)->Submit(HeldJob("a", open, singles_running, done.Callback("single"))));
  }
  WaitUntil([&] { return singles_running == 4; });
  ASSERT_EQ(singles_running, 4);

  std::atomic<int> singles_seen_by_slice{-1};
  ChipContext seen;
  Job slice;
  slice.client = "b";
  slice.chip_kind = "v5e";
  slice.topology = {2, 2};
  std::atomic<bool> slice_active{false};
  slice.run = [&](const ChipContext& context) -> Result<double> {
    slice_active = true;
    singles_seen_by_slice = singles_running.load();
    seen = context;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    slice_active = false;
    return 2e-3;
  };
  slice.done = done.Callback("slice");
  ASSERT_TRUE((*pool)->Submit(std::move(slice)));
  // A one-chip job queued after the slice job never runs while the slice
  // job holds the slice (it may run before, on a chip freed first).
  std::atomic<bool> late_overlapped{false};
  Job late = Sleeper("b", 0, 1e-3, done.Callback("late"));
  late.run = [&](const ChipContext&) -> Result<double> {
    late_overlapped = late_overlapped || slice_active;
    return 1e-3;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE((*pool)->Submit(std::move(late)));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.order().size(), 0u) << "nothing may finish while the singles hold the chips";

  release.set_value();
  done.WaitFor(6);
  EXPECT_EQ(singles_seen_by_slice, 0) << "the slice job started while a chip of its slice was busy";
  EXPECT_EQ(seen.chips, 4);
  EXPECT_EQ(seen.topology, (std::vector<int>{2, 2}));
  EXPECT_FALSE(late_overlapped) << "a one-chip job ran on the slice while the slice job held it";
  // Every chip of the slice counts the slice job.
  PoolStatus status = (*pool)->status();
  for (const ChipStatus& chip : status.chips) EXPECT_GE(chip.jobs_run, 1u);
  uint64_t total = 0;
  for (const ChipStatus& chip : status.chips) total += chip.jobs_run;
  EXPECT_EQ(total, 4u + 4u + 1u);  // four singles, the slice on four chips, the late one
}

TEST(DevicePoolSliceTest, OneChipJobsDoNotStarveASliceJobThatIsGathering) {
  // Both chips of a 1x2 slice start held; then a slice job and a stream of
  // short one-chip jobs queue. Once the slice's first chip takes the slice
  // job, its other chip must take no new work: the slice job runs after at
  // most the one-chip job already running there, not after the whole stream.
  auto pool = DevicePool::Create("v5e:1x2");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  std::promise<void> release_first, release_second;
  std::atomic<int> held{0};
  ASSERT_TRUE((*pool)->Submit(HeldJob("a", release_first.get_future().share(), held, done.Callback("held"))));
  WaitUntil([&] { return held == 1; });
  ASSERT_TRUE((*pool)->Submit(HeldJob("a", release_second.get_future().share(), held, done.Callback("held"))));
  WaitUntil([&] { return held == 2; });
  Job slice = Sleeper("b", 0, 1e-3, done.Callback("slice"));
  slice.chip_kind = "v5e";
  slice.topology = {1, 2};
  ASSERT_TRUE((*pool)->Submit(std::move(slice)));
  constexpr int kStream = 30;
  for (int i = 0; i < kStream; ++i) {
    Job quick = Sleeper("c", 5, 1e-3, done.Callback("quick"));
    quick.chip_kind = "v5e";
    ASSERT_TRUE((*pool)->Submit(std::move(quick)));
  }
  release_first.set_value();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  release_second.set_value();
  done.WaitFor(2 + 1 + kStream);
  const std::vector<std::string> order = done.order();
  int quick_before_slice = 0;
  for (const std::string& label : order) {
    if (label == "slice") break;
    quick_before_slice += label == "quick" ? 1 : 0;
  }
  EXPECT_LT(quick_before_slice, 12) << "the slice job waited for the one-chip stream";
}

TEST(DevicePoolSliceTest, ATopologyThePoolLacksIsRefusedAtSubmit) {
  auto pool = DevicePool::Create("v5e:4,v5p:2x2x1");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Job job = Sleeper("a", 0, 1e-3, done.Callback("x"));
  job.chip_kind = "v5e";
  job.topology = {2, 2};
  Status refused = (*pool)->Submit(std::move(job));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason(), kChipNotInPool);
  EXPECT_NE(refused.error().message.find("no v5e slice of topology 2x2"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("--pool v5e:2x2"), std::string::npos);

  Job fits = Sleeper("a", 0, 1e-3, done.Callback("fits"));
  fits.chip_kind = "v5p";
  fits.topology = {2, 2, 1};
  ASSERT_TRUE((*pool)->Submit(std::move(fits)));
  done.WaitFor(1);
  EXPECT_EQ(done.errors()[0], "");
}

TEST(DevicePoolSliceTest, LooseChipsNeverRunASliceJob) {
  // Four loose v5e chips are not a 2x2 slice.
  auto pool = DevicePool::Create("v5e:4");
  ASSERT_TRUE(pool) << pool.error().message;
  Completions done;
  Job job = Sleeper("a", 0, 1e-3, done.Callback("x"));
  job.chip_kind = "v5e";
  job.topology = {2, 2};
  EXPECT_FALSE((*pool)->Submit(std::move(job)));
}

}  // namespace
}  // namespace kiln::runtime::pool
