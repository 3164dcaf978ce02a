// Collectives across the devices of a simulated slice: values really cross
// between the devices' threads, groups follow XLA's modes, and a device that
// fails or runs a different program ends the others' waits with an error.
#include "runtime/spmd/slice_execution.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/eval/eval_test_util.h"
#include "runtime/eval/interrupt.h"
#include "runtime/eval/slice_rendezvous.h"

namespace kiln::runtime {
namespace {

using testing::Lit;

// Evaluates `text` on `slice` with device d's arguments args[d]; returns
// each device's result as text, or the error.
Result<std::vector<std::string>> RunSlice(const std::string& text, SliceShape slice,
                                          const std::vector<std::vector<hlo::Literal>>& args,
                                          const EvalOptions& options = {}) {
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(text);
  if (!module) return std::unexpected(module.error());
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Literal> results, EvaluateOnSlice(**module, slice, args, options));
  std::vector<std::string> out;
  for (const hlo::Literal& r : results) out.push_back(r.ToString());
  return out;
}

// Device d's argument: f32[2] {10d, 10d+1}.
std::vector<std::vector<hlo::Literal>> PerDevice(int n) {
  std::vector<std::vector<hlo::Literal>> args;
  for (int d = 0; d < n; ++d) {
    args.push_back({Lit("f32[2] {" + std::to_string(10 * d) + ", " + std::to_string(10 * d + 1) + "}")});
  }
  return args;
}

// An entry that runs computation `yes` on partition 0 and `no` elsewhere.
constexpr char kBranchOnPartition[] = R"(
ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(first, p, p), true_computation=yes, false_computation=no
})";

constexpr char kSum[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(SliceExecutionTest, AllReduceSumsEveryDevicesValue) {
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
})";
  auto results = RunSlice(text, {1, 4}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  for (const std::string& r : *results) EXPECT_EQ(r, "f32[2] {60, 64}");
}

TEST(SliceExecutionTest, AllReduceKeepsGroupsApart) {
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=add
})";
  auto results = RunSlice(text, {1, 4}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[2] {10, 12}");
  EXPECT_EQ((*results)[1], "f32[2] {10, 12}");
  EXPECT_EQ((*results)[2], "f32[2] {50, 52}");
  EXPECT_EQ((*results)[3], "f32[2] {50, 52}");
}

TEST(SliceExecutionTest, AllGatherConcatenatesInGroupOrder) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[4] all-gather(p), channel_id=1, replica_groups={{1,0},{3,2}}, dimensions={0}, use_global_device_ids=true
})";
  auto results = RunSlice(text, {1, 4}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[4] {10, 11, 0, 1}");
  EXPECT_EQ((*results)[1], "f32[4] {10, 11, 0, 1}");
  EXPECT_EQ((*results)[3], "f32[4] {30, 31, 20, 21}");
}

TEST(SliceExecutionTest, ReduceScatterGivesEachDeviceItsBlockOfTheSum) {
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2,2] parameter(0)
  ROOT r = f32[1,2] reduce-scatter(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true, to_apply=add
})";
  std::vector<std::vector<hlo::Literal>> args = {{Lit("f32[2,2] {{1, 2}, {3, 4}}")},
                                                 {Lit("f32[2,2] {{10, 20}, {30, 40}}")}};
  auto results = RunSlice(text, {1, 2}, args);
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[1,2] {{11, 22}}");
  EXPECT_EQ((*results)[1], "f32[1,2] {{33, 44}}");
}

TEST(SliceExecutionTest, AllToAllSwapsBlocks) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = s32[2,2] parameter(0)
  ROOT r = s32[2,2] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}
})";
  std::vector<std::vector<hlo::Literal>> args = {{Lit("s32[2,2] {{1, 2}, {3, 4}}")},
                                                 {Lit("s32[2,2] {{5, 6}, {7, 8}}")}};
  auto results = RunSlice(text, {1, 2}, args);
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "s32[2,2] {{1, 2}, {5, 6}}");
  EXPECT_EQ((*results)[1], "s32[2,2] {{3, 4}, {7, 8}}");
}

TEST(SliceExecutionTest, CollectivePermuteShiftsAroundTheRingAndZeroesTheUnsent) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3}}
})";
  auto results = RunSlice(text, {1, 4}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[2] {0, 0}");
  EXPECT_EQ((*results)[1], "f32[2] {0, 1}");
  EXPECT_EQ((*results)[3], "f32[2] {20, 21}");
}

TEST(SliceExecutionTest, PartitionAndReplicaIdsNameTheDevice) {
  const std::string text = R"(HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})";
  auto results = RunSlice(text, {2, 2}, std::vector<std::vector<hlo::Literal>>(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "(u32[] 0, u32[] 0)");
  EXPECT_EQ((*results)[1], "(u32[] 0, u32[] 1)");
  EXPECT_EQ((*results)[2], "(u32[] 1, u32[] 0)");
  EXPECT_EQ((*results)[3], "(u32[] 1, u32[] 1)");
}

TEST(SliceExecutionTest, CrossReplicaGroupsStayWithinAPartition) {
  // No channel_id: groups of replica ids; each partition reduces apart.
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups={}, to_apply=add
})";
  auto results = RunSlice(text, {2, 2}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[2] {20, 22}");  // devices 0 and 2
  EXPECT_EQ((*results)[1], "f32[2] {40, 42}");  // devices 1 and 3
  // With a channel and no global ids: every partition of the replicas.
  text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=3, replica_groups={{0},{1}}, to_apply=add
})";
  results = RunSlice(text, {2, 2}, PerDevice(4));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[0], "f32[2] {10, 12}");  // devices 0 and 1
  EXPECT_EQ((*results)[3], "f32[2] {50, 52}");  // devices 2 and 3
}

TEST(SliceExecutionTest, AsyncStartDonePairsExchangeToo) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  s = (f32[2], f32[4]) all-gather-start(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT d = f32[4] all-gather-done(s)
})";
  auto results = RunSlice(text, {1, 2}, PerDevice(2));
  ASSERT_TRUE(results) << results.error().ToString();
  EXPECT_EQ((*results)[1], "f32[4] {0, 1, 10, 11}");
}

TEST(SliceExecutionTest, ADeviceThatFailsEndsTheOthersWaitWithItsError) {
  // Device 1 gets the wrong argument count and fails before its
  // all-reduce, where device 0 waits for it.
  const std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})";
  std::vector<std::vector<hlo::Literal>> args = PerDevice(2);
  args[1].push_back(Lit("f32[] 1"));
  auto results = RunSlice(text, {1, 2}, args);
  ASSERT_FALSE(results);
  EXPECT_NE(results.error().ToString().find("device 1"), std::string::npos) << results.error().ToString();
}

TEST(SliceExecutionTest, TheErrorIsTheLowestDeviceThatFailedOnItsOwnWhateverTheTiming) {
  // Devices 1 and 3 fail on their own; 0 and 2 fail only because their
  // all-reduce peers never come. Whichever thread fails first, the answer
  // is device 1's own error, every time.
  const std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
})";
  std::vector<std::vector<hlo::Literal>> args = PerDevice(4);
  args[1].push_back(Lit("f32[] 1"));
  args[3].push_back(Lit("f32[] 3"));
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto results = RunSlice(text, {1, 4}, args);
    ASSERT_FALSE(results);
    const std::string error = results.error().ToString();
    EXPECT_EQ(error.rfind("device 1: ", 0), 0u) << error;
    EXPECT_NE(results.error().reason(), kPeerDeviceEnded) << error;
    EXPECT_EQ(error.find("device 3"), std::string::npos) << error;
  }
}

TEST(SliceExecutionTest, DevicesRunningDifferentCollectivesAreAnErrorNotAHang) {
  // Device 0 takes the true branch's all-reduce, device 1 the false branch's
  // all-gather: they disagree at their first collective.
  const std::string text = std::string("HloModule m\n") + kSum + R"(
yes {
  a = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
no {
  a = f32[2] parameter(0)
  g = f32[4] all-gather(a), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT s = f32[2] slice(g), slice={[0:2]}
}
)" + kBranchOnPartition;
  auto results = RunSlice(text, {1, 2}, PerDevice(2));
  ASSERT_FALSE(results);
  EXPECT_NE(results.error().ToString().find("disagree"), std::string::npos) << results.error().ToString();
}

TEST(SliceExecutionTest, ADeviceThatSkipsACollectiveIsAnErrorNotAHang) {
  const std::string text = std::string("HloModule m\n") + kSum + R"(
yes {
  a = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
no {
  ROOT a = f32[2] parameter(0)
}
)" + kBranchOnPartition;
  auto results = RunSlice(text, {1, 2}, PerDevice(2));
  ASSERT_FALSE(results);
  EXPECT_NE(results.error().ToString().find("ended without reaching %r"), std::string::npos)
      << results.error().ToString();
}

TEST(SliceExecutionTest, AStoppedInterruptEndsAWaitForADeviceThatNeverComes) {
  SliceRendezvous rendezvous(2);
  Interrupt interrupt;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    interrupt.Stop(StopReason::kDeadline);
  });
  const int64_t group[] = {0, 1};
  auto mine = std::make_shared<std::vector<hlo::Literal>>();
  mine->push_back(Lit("f32[] 1"));
  auto parts = rendezvous.Exchange(0, group, "all-reduce.7", mine, &interrupt);
  stopper.join();
  ASSERT_FALSE(parts);
  EXPECT_EQ(parts.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(parts.error().ToString().find("stopped (deadline exceeded) waiting for the devices of %all-reduce.7"),
            std::string::npos)
      << parts.error().ToString();
}

TEST(SliceExecutionTest, AnAbortedRendezvousRefusesLaterExchanges) {
  SliceRendezvous rendezvous(2);
  rendezvous.Abort(InternalError("device 1 broke"));
  const int64_t group[] = {0, 1};
  auto parts = rendezvous.Exchange(0, group, "all-gather.1", std::make_shared<std::vector<hlo::Literal>>(), nullptr);
  ASSERT_FALSE(parts);
  EXPECT_NE(parts.error().ToString().find("device 1 broke"), std::string::npos);
}

TEST(SliceExecutionTest, GroupsNamingDevicesOutsideTheSliceAreRefused) {
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=add
})";
  auto results = RunSlice(text, {1, 4}, PerDevice(4));
  ASSERT_FALSE(results);
  EXPECT_NE(results.error().ToString().find("outside the slice"), std::string::npos) << results.error().ToString();
  EXPECT_NE(results.error().ToString().find("%r"), std::string::npos);
}

TEST(SliceExecutionTest, OneChipStillPassesCollectivesThrough) {
  std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})";
  EXPECT_EQ(testing::RunToText(text, {Lit("f32[2] {3, 4}")}), "f32[2] {3, 4}");
  const std::string gather = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[4] all-gather(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
})";
  EXPECT_NE(testing::RunToText(gather, {Lit("f32[2] {3, 4}")}).find("slice of chips"), std::string::npos);
}

TEST(SliceExecutionTest, TooManyDevicesIsRefusedBeforeAnyThreadStarts) {
  auto results = RunSlice("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", {1, kMaxSliceDevices + 1},
                          std::vector<std::vector<hlo::Literal>>(kMaxSliceDevices + 1));
  ASSERT_FALSE(results);
  EXPECT_NE(results.error().ToString().find("cannot be simulated with values"), std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime
