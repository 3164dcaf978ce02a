// The ICI collective model: group resolution, the ring/line/multi-axis
// formulas of the scaling book, routing and link sharing, and the book's
// anchors (collective_anchors_test.cc has the measured ones end to end).
#include "runtime/timing/collective_time.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::timing {
namespace {

const ChipSpec& ChipNamed(const char* name) {
  const ChipSpec* chip = FindChip(name);
  EXPECT_NE(chip, nullptr) << name;
  return *chip;
}

Topology Slice(const char* text, const char* chip) {
  auto t = ParseTopology(text, ChipNamed(chip));
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : Topology{};
}

// A module whose entry's root is `op` (one line of HLO, named "c") over a
// parameter of `operand` shape.
class Collective {
 public:
  Collective(const std::string& operand, const std::string& op) {
    std::string text = "HloModule m\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                       "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = " +
                       operand + " parameter(0)\n  ROOT c = " + op + "\n}\n";
    auto parsed = hlo::ParseModule(text);
    EXPECT_TRUE(parsed) << text << (parsed ? "" : parsed.error().message);
    if (parsed) module_ = std::move(*parsed);
  }
  const hlo::Instruction& instr() const { return *module_->entry()->root(); }

 private:
  std::unique_ptr<hlo::Module> module_;
};

CollectiveTime Time(const Collective& c, const char* topology, const char* chip, SliceAssignment a = {}) {
  auto t = TimeCollective(c.instr(), Slice(topology, chip), ChipNamed(chip), a);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : CollectiveTime{};
}

std::string ErrorOf(const Collective& c, const char* topology, const char* chip, SliceAssignment a = {}) {
  auto t = TimeCollective(c.instr(), Slice(topology, chip), ChipNamed(chip), a);
  EXPECT_FALSE(t);
  return t ? "" : t.error().message;
}

constexpr double kUs = 1e-6;

// ---- Groups -----------------------------------------------------------

TEST(CollectiveGroupsTest, ModesFollowChannelIdAndGlobalDeviceIds) {
  Collective replica("f32[8]", "f32[8] all-reduce(p), replica_groups={}, to_apply=sum");
  Collective partition("f32[8]", "f32[8] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}");
  Collective both("f32[8]", "f32[8] all-reduce(p), channel_id=1, replica_groups={{0}}, to_apply=sum");
  Collective flat("f32[8]",
                  "f32[8] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, "
                  "to_apply=sum");
  EXPECT_EQ(*CollectiveGroupMode(replica.instr()), GroupMode::kCrossReplica);
  EXPECT_EQ(*CollectiveGroupMode(partition.instr()), GroupMode::kCrossPartition);
  EXPECT_EQ(*CollectiveGroupMode(both.instr()), GroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(*CollectiveGroupMode(flat.instr()), GroupMode::kFlattenedId);
}

TEST(CollectiveGroupsTest, EmptyGroupsMeanEveryDevice) {
  Collective c("f32[8]", "f32[8] all-reduce(p), replica_groups={}, to_apply=sum");
  auto groups = ParticipantGroups(c.instr(), 8);
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(CollectiveGroupsTest, ReplicasAndPartitionsMapToDevicesAsXlasPlacer) {
  // 2 replicas x 4 partitions: device = partition * 2 + replica.
  SliceAssignment a{2, 4};
  Collective both("f32[8]", "f32[8] all-reduce(p), channel_id=1, replica_groups={{0},{1}}, to_apply=sum");
  EXPECT_EQ(*ParticipantGroups(both.instr(), 8, a), (std::vector<std::vector<int64_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  Collective flat("f32[8]",
                  "f32[8] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, "
                  "use_global_device_ids=true, to_apply=sum");
  EXPECT_EQ(*ParticipantGroups(flat.instr(), 8, a), (std::vector<std::vector<int64_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  Collective partition("f32[8]", "f32[8] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}");
  EXPECT_EQ(*ParticipantGroups(partition.instr(), 8, a), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  Collective replica("f32[8]", "f32[8] all-reduce(p), replica_groups={{0,1}}, to_apply=sum");
  EXPECT_EQ(*ParticipantGroups(replica.instr(), 8, a),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(CollectiveGroupsTest, IotaGroupsExpand) {
  Collective c("f32[8]",
               "f32[32] all-gather(p), channel_id=1, replica_groups=[2,4]<=[8], dimensions={0}, "
               "use_global_device_ids=true");
  EXPECT_EQ(*ParticipantGroups(c.instr(), 8), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(CollectiveGroupsTest, PermutePairsRepeatPerReplica) {
  Collective c("f32[8]", "f32[8] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}");
  auto pairs = PermutePairs(c.instr(), 4, {2, 2});
  ASSERT_TRUE(pairs) << pairs.error().message;
  EXPECT_EQ(*pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 3}, {2, 0}, {3, 1}}));
}

TEST(CollectiveGroupsTest, BadGroupsNameTheInstruction) {
  Collective far("f32[8]", "f32[8] all-reduce(p), replica_groups={{0,9}}, to_apply=sum");
  EXPECT_NE(ErrorOf(far, "2x4", "v5e").find("instruction %c: names replica 9, but the slice runs 8 replicas"),
            std::string::npos);
  Collective global("f32[8]", "f32[8] all-reduce(p), replica_groups={}, use_global_device_ids=true, to_apply=sum");
  EXPECT_NE(ErrorOf(global, "2x4", "v5e").find("needs a channel_id"), std::string::npos);
  Collective fits("f32[8]", "f32[8] all-reduce(p), replica_groups={}, to_apply=sum");
  EXPECT_NE(ErrorOf(fits, "2x4", "v5e", {3, 2}).find("3 replicas x 2 partitions do not fill the slice's 8 chips"),
            std::string::npos);
  Collective one("f32[8]", "f32[8] all-reduce(p), replica_groups={{0,1}}, to_apply=sum");
  EXPECT_NE(ErrorOf(one, "2x4", "v5e", {1, 8}).find("names replica 1, but the slice runs 1 replica"),
            std::string::npos);
  Collective pair("f32[8]", "f32[8] collective-permute(p), source_target_pairs={{0,8}}");
  EXPECT_NE(ErrorOf(pair, "2x4", "v5e").find("names replica 8"), std::string::npos);
}

// ---- The book's formulas ----------------------------------------------------

TEST(CollectiveTimeTest, OneParticipantMovesNothing) {
  Collective c("f32[1024]", "f32[1024] all-reduce(p), replica_groups={{0},{1},{2},{3}}, to_apply=sum");
  CollectiveTime t = Time(c, "2x2", "v5e");
  EXPECT_EQ(t.participants, 1);
  EXPECT_EQ(t.seconds, 0);
  EXPECT_EQ(t.ici_bytes, 0);
}

TEST(CollectiveTimeTest, AllGatherOnALineCarriesNMinusOneShardsOnItsEndLinks) {
  // 4 chips along x of a v5e 4x4 (no wraparound): 3 shards over one link, 3 hops.
  Collective c("bf16[256,1024]", "bf16[1024,1024] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}");
  const double shard = 256 * 1024 * 2;
  CollectiveTime t = Time(c, "4x4", "v5e");
  EXPECT_EQ(t.kind, "all-gather");
  EXPECT_EQ(t.participants, 4);
  EXPECT_EQ(t.route, "line x(4)");
  EXPECT_DOUBLE_EQ(t.payload_bytes, shard);
  EXPECT_DOUBLE_EQ(t.ici_bytes, 3 * shard);
  EXPECT_DOUBLE_EQ(t.transfer_seconds, 3 * shard / 4.5e10);
  EXPECT_DOUBLE_EQ(t.latency_seconds, 3 * kUs);
  EXPECT_DOUBLE_EQ(t.seconds, t.transfer_seconds + t.latency_seconds);
}

TEST(CollectiveTimeTest, AllGatherRoundAWrappedAxisUsesBothDirections) {
  // 16 chips along x of a v5e 16x16 (a full axis wraps): (n-1)/2 shards each way.
  Collective c("bf16[64,1024]", "bf16[1024,1024] all-gather(p), replica_groups=[16,16]<=[256], dimensions={0}");
  const double shard = 64 * 1024 * 2;
  CollectiveTime t = Time(c, "16x16", "v5e");
  EXPECT_EQ(t.route, "ring x(16)");
  EXPECT_EQ(t.groups, 16);
  EXPECT_DOUBLE_EQ(t.transfer_seconds, 7.5 * shard / 4.5e10);
  EXPECT_DOUBLE_EQ(t.latency_seconds, 8 * kUs);
  // The same group on an 8x16 slice's x axis (8 wide, no wraparound) is a line.
  Collective line("bf16[64,1024]", "bf16[512,1024] all-gather(p), replica_groups=[16,8]<=[128], dimensions={0}");
  EXPECT_DOUBLE_EQ(Time(line, "8x16", "v5e").transfer_seconds, 7 * shard / 4.5e10);
}

TEST(CollectiveTimeTest, MultiAxisAllGatherUsesEveryAxisAtOnce) {
  // 16 chips spanning x and y of a v5p 4x4x4 cube: two wrapped axes double
  // the bandwidth of one (the book's n_axes factor).
  Collective two_axes("bf16[128,1024]",
                      "bf16[2048,1024] all-gather(p), replica_groups=[4,16]<=[64], dimensions={0}");
  const double shard = 128 * 1024 * 2;
  CollectiveTime t = Time(two_axes, "4x4x4", "v5p");
  EXPECT_EQ(t.route, "ring x(4) + ring y(4)");
  EXPECT_EQ(t.participants, 16);
  // Half the data takes x then y, half y then x: 1.5 * (S/2) + 1.5 * (4S/2).
  EXPECT_DOUBLE_EQ(t.link_bytes, 3.75 * shard);
  EXPECT_DOUBLE_EQ(t.latency_seconds, 4 * kUs);
  // One ring of 16 with the same shards would carry 7.5 shards: twice as many.
  EXPECT_DOUBLE_EQ(t.link_bytes * 2, 7.5 * shard);
}

TEST(CollectiveTimeTest, ReduceScatterMirrorsAllGatherAndAllReduceIsBoth) {
  Collective gather("bf16[256,1024]", "bf16[1024,1024] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}");
  Collective scatter("bf16[1024,1024]",
                     "bf16[256,1024] reduce-scatter(p), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=sum");
  Collective reduce("bf16[1024,1024]", "bf16[1024,1024] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=sum");
  CollectiveTime g = Time(gather, "4x4", "v5e");
  CollectiveTime s = Time(scatter, "4x4", "v5e");
  CollectiveTime r = Time(reduce, "4x4", "v5e");
  EXPECT_DOUBLE_EQ(s.seconds, g.seconds);
  EXPECT_DOUBLE_EQ(s.ici_bytes, g.ici_bytes);
  EXPECT_DOUBLE_EQ(r.seconds, 2 * s.seconds);
  EXPECT_DOUBLE_EQ(r.ici_bytes, 2 * s.ici_bytes);
}

TEST(CollectiveTimeTest, AllToAllIsAboutAQuarterOfAnAllGatherOnARing) {
  // The book: an all-to-all moves a quarter of an all-gather's bytes on a
  // bidirectional ring (exactly 32 chunks of D/16 vs 7.5 shards of D here).
  Collective a2a("bf16[1024,1024]",
                 "bf16[1024,1024] all-to-all(p), replica_groups=[16,16]<=[256], dimensions={0}");
  Collective gather("bf16[1024,1024]",
                    "bf16[16384,1024] all-gather(p), replica_groups=[16,16]<=[256], dimensions={0}");
  CollectiveTime a = Time(a2a, "16x16", "v5e");
  CollectiveTime g = Time(gather, "16x16", "v5e");
  const double d = 1024 * 1024 * 2;
  EXPECT_DOUBLE_EQ(a.link_bytes, 2 * d);
  EXPECT_DOUBLE_EQ(g.link_bytes, 7.5 * d);
  EXPECT_NEAR(a.link_bytes / g.link_bytes, 0.25, 0.03);
}

TEST(CollectiveTimeTest, AllToAllOnALineIsLimitedByItsMiddleLink) {
  // 4 in a line: 2 x 2 pairs cross the middle link, each a quarter of D.
  Collective a2a("bf16[1024,1024]", "bf16[1024,1024] all-to-all(p), replica_groups={{0,1,2,3}}, dimensions={0}");
  const double d = 1024 * 1024 * 2;
  CollectiveTime t = Time(a2a, "4x4", "v5e");
  EXPECT_DOUBLE_EQ(t.link_bytes, d);
  EXPECT_DOUBLE_EQ(t.latency_seconds, 3 * kUs);
}

TEST(CollectiveTimeTest, PermuteCountsHopsAndUsesBothPortsOfADiagonal) {
  // The book's TPU chapter: TPU{0,0} to TPU{3,3} of a v5e 4x4 takes six hops
  // and sends through both its ports at once.
  Collective c("bf16[8,128,8192]", "bf16[8,128,8192] collective-permute(p), source_target_pairs={{0,15}}");
  const double bytes = 8.0 * 128 * 8192 * 2;
  CollectiveTime t = Time(c, "4x4", "v5e", {16, 1});
  EXPECT_DOUBLE_EQ(t.latency_seconds, 6 * kUs);
  EXPECT_DOUBLE_EQ(t.transfer_seconds, bytes / 2 / 4.5e10);
  EXPECT_EQ(t.route, "1 pairs, 6 hops");
}

TEST(CollectiveTimeTest, PairsSharingALinkShareItsBandwidth) {
  const double bytes = 1024 * 4;
  Collective apart("f32[1024]", "f32[1024] collective-permute(p), source_target_pairs={{0,1},{2,3}}");
  Collective crossing("f32[1024]", "f32[1024] collective-permute(p), source_target_pairs={{0,2},{1,3}}");
  EXPECT_DOUBLE_EQ(Time(apart, "4x4", "v5e").link_bytes, bytes);
  EXPECT_DOUBLE_EQ(Time(crossing, "4x4", "v5e").link_bytes, 2 * bytes);  // both cross 1->2
}

TEST(CollectiveTimeTest, StridedGroupsRunRoutedRingsThatShareLinks) {
  Collective adjacent("f32[1024]", "f32[2048] all-gather(p), replica_groups={{0,1},{2,3}}, dimensions={0}");
  Collective strided("f32[1024]", "f32[2048] all-gather(p), replica_groups={{0,2},{1,3}}, dimensions={0}");
  CollectiveTime a = Time(adjacent, "4x4", "v5e");
  CollectiveTime s = Time(strided, "4x4", "v5e");
  EXPECT_EQ(a.route, "line x(2)");
  EXPECT_EQ(s.route, "ring of 2 (routed)");
  EXPECT_DOUBLE_EQ(s.link_bytes, 2 * a.link_bytes);  // both groups cross 1->2
  EXPECT_DOUBLE_EQ(s.latency_seconds, 2 * kUs);      // one step of two links
}

TEST(CollectiveTimeTest, AsyncStartIsTimedAsItsCollective) {
  Collective start("bf16[256,1024]",
                   "(bf16[256,1024], bf16[1024,1024]) all-gather-start(p), replica_groups={{0,1,2,3}}, "
                   "dimensions={0}");
  Collective sync("bf16[256,1024]", "bf16[1024,1024] all-gather(p), replica_groups={{0,1,2,3}}, dimensions={0}");
  CollectiveTime t = Time(start, "4x4", "v5e");
  EXPECT_EQ(t.kind, "all-gather");
  EXPECT_DOUBLE_EQ(t.seconds, Time(sync, "4x4", "v5e").seconds);
  EXPECT_TRUE(IsTimedCollective(hlo::Opcode::kAllGatherStart));
  EXPECT_FALSE(IsTimedCollective(hlo::Opcode::kAllGatherDone));
}

// ---- The book's worked estimates (sharding chapter, Question 2) --------------

// AllGather_X([B_X, D_Y]) on a TPU v4 4x4x4, B=1024, D=4096, bf16: the book
// estimates 23 us (full wraparound, 9e10 B/s bidirectional); gathering over
// X and Y together, 46 us.
TEST(CollectiveTimeTest, BookWorkedAllGathersOnAV4CubeLandWithin25Percent) {
  Collective x("bf16[256,1024]", "bf16[1024,1024] all-gather(p), replica_groups=[16,4]<=[64], dimensions={0}");
  Collective xy("bf16[256,1024]", "bf16[4096,1024] all-gather(p), replica_groups=[4,16]<=[64], dimensions={0}");
  CollectiveTime tx = Time(x, "4x4x4", "v4");
  CollectiveTime txy = Time(xy, "4x4x4", "v4");
  EXPECT_EQ(tx.route, "ring x(4)");
  EXPECT_EQ(txy.route, "ring x(4) + ring y(4)");
  EXPECT_NEAR(tx.seconds, 23 * kUs, 0.25 * 23 * kUs) << tx.seconds / kUs << " us";
  EXPECT_NEAR(txy.seconds, 46 * kUs, 0.25 * 46 * kUs) << txy.seconds / kUs << " us";
}

}  // namespace
}  // namespace kiln::runtime::timing
