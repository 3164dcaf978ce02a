#include "compiler/hlo/sharding.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/test_corpus.h"

namespace kiln::hlo {
namespace {

HloSharding MustParse(std::string_view text) {
  Result<HloSharding> s = ParseSharding(text);
  EXPECT_TRUE(s.has_value()) << text << ": " << (s ? "" : s.error().ToString());
  return s ? *s : HloSharding::Unknown();
}

hlo::Shape F32(std::vector<int64_t> dims) { return hlo::Shape(hlo::PrimitiveType::kF32, std::move(dims)); }

TEST(HloShardingTest, ParsesSimpleForms) {
  EXPECT_TRUE(MustParse("{replicated}").IsReplicated());
  EXPECT_TRUE(MustParse("{manual}").IsManual());
  HloSharding maximal = MustParse("{maximal device=3}");
  ASSERT_TRUE(maximal.IsMaximal());
  EXPECT_EQ(maximal.maximal_device(), 3);
  // Metadata and shard_as annotations are dropped.
  EXPECT_TRUE(MustParse("{replicated metadata={op_name=\"a}b\" source_line=3}}").IsReplicated());
  EXPECT_TRUE(MustParse("{devices=[2]0,1 shard_as 1}").IsTiled());
}

TEST(HloShardingTest, ParsesExplicitAndIotaDeviceLists) {
  HloSharding explicit_list = MustParse("{devices=[2,2]3,1,2,0}");
  ASSERT_TRUE(explicit_list.IsTiled());
  EXPECT_EQ(explicit_list.tile_dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(explicit_list.devices(), (std::vector<int64_t>{3, 1, 2, 0}));

  EXPECT_EQ(MustParse("{devices=[4,1]<=[4]}").devices(), (std::vector<int64_t>{0, 1, 2, 3}));
  // iota(4).reshape(2,2).transpose(1,0) = [[0,2],[1,3]].
  EXPECT_EQ(MustParse("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}").devices(),
            (std::vector<int64_t>{0, 2, 1, 3}));
  // iota(8).reshape(2,2,2).transpose(2,0,1).
  EXPECT_EQ(MustParse("{devices=[8]<=[2,2,2]T(2,0,1)}").devices(),
            (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  // The same assignment written either way compares equal.
  EXPECT_EQ(MustParse("{devices=[2,2]<=[2,2]T(1,0)}"), MustParse("{devices=[2,2]0,2,1,3}"));
}

TEST(HloShardingTest, ParsesSubgroupsAndCanonicalSpacing) {
  // The parser keeps attribute text in canonical spacing, which drops the
  // space before last_tile_dim_replicate.
  HloSharding partial = MustParse("{devices=[2,1,2]<=[4]last_tile_dim_replicate}");
  ASSERT_TRUE(partial.IsTiled());
  EXPECT_EQ(partial.data_rank(), 2);
  EXPECT_EQ(partial.subgroups(), (std::vector<SubgroupType>{SubgroupType::kReplicated}));

  HloSharding manual = MustParse("{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}");
  EXPECT_TRUE(manual.HasManualSubgroup());
  EXPECT_EQ(manual.data_rank(), 1);

  // Tiles of one along every data dim with only replication: replicated.
  EXPECT_TRUE(MustParse("{devices=[1,1,4]<=[4] last_tile_dim_replicate}").IsReplicated());
}

TEST(HloShardingTest, ParsesTupleShardings) {
  HloSharding tuple = MustParse("{{replicated}, {devices=[2,1,1,1,1]<=[2]}}");
  ASSERT_TRUE(tuple.IsTuple());
  ASSERT_EQ(tuple.tuple_elements().size(), 2u);
  EXPECT_TRUE(tuple.tuple_elements()[0].IsReplicated());
  EXPECT_TRUE(tuple.tuple_elements()[1].IsTiled());
  EXPECT_TRUE(MustParse("{}").IsTuple());
}

TEST(HloShardingTest, PrintsWhatParsesBackEqual) {
  for (std::string_view text :
       {"{replicated}", "{manual}", "{maximal device=1}", "{devices=[2,1]<=[2]}", "{devices=[2,2]3,1,2,0}",
        "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
        "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}", "{{replicated}, {devices=[4]<=[4]}}"}) {
    HloSharding s = MustParse(text);
    std::string printed = s.ToString();
    EXPECT_EQ(MustParse(printed), s) << text << " printed as " << printed;
  }
  EXPECT_EQ(MustParse("{devices=[4,1]<=[4]}").ToString(), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(MustParse("{devices=[2]1,0}").ToString(), "{devices=[2]1,0}");
}

TEST(HloShardingTest, RejectsMalformedText) {
  for (std::string_view text : {"", "{", "replicated", "{replicated", "{devices=[2,2]0,1,2}", "{devices=[2]<=[3]}",
                                "{devices=[2,2]<=[2,2]T(0,0)}", "{maximal}", "{sideways}",
                                "{devices=[0]}", "{devices=[2]0,1 last_tile_dims={weird}}", "{replicated} x",
                                "{devices=[99999999,99999999]<=[1]}"}) {
    Result<HloSharding> s = ParseSharding(text);
    EXPECT_FALSE(s.has_value()) << "accepted " << text;
  }
  Result<HloSharding> short_list = ParseSharding("{devices=[2,2]0,1,2}");
  ASSERT_FALSE(short_list.has_value());
  EXPECT_NE(short_list.error().message.find("needs 4 devices but 3 are listed"), std::string::npos)
      << short_list.error().message;
}

TEST(HloShardingTest, ValidatesAgainstShapeAndDeviceCount) {
  EXPECT_TRUE(MustParse("{devices=[2,1]<=[2]}").Validate(F32({4, 4}), 2).has_value());
  Status rank = MustParse("{devices=[2,2]<=[4]}").Validate(F32({8}), 4);
  ASSERT_FALSE(rank.has_value());
  EXPECT_NE(rank.error().message.find("has rank 2 but the shape f32[8] has rank 1"), std::string::npos)
      << rank.error().message;
  Status count = MustParse("{devices=[2,1]<=[2]}").Validate(F32({4, 4}), 4);
  ASSERT_FALSE(count.has_value());
  EXPECT_NE(count.error().message.find("holds 2 devices but the module runs on 4 partitions"), std::string::npos)
      << count.error().message;
  EXPECT_FALSE(MustParse("{devices=[2]0,0}").Validate(F32({4}), 2).has_value());
  EXPECT_FALSE(MustParse("{devices=[2]0,2}").Validate(F32({4}), 2).has_value());
  EXPECT_FALSE(MustParse("{maximal device=2}").Validate(F32({4}), 2).has_value());

  hlo::Shape pair = hlo::Shape::Tuple({F32({2}), hlo::Shape::Tuple({F32({4, 2}), F32({})})});
  EXPECT_TRUE(MustParse("{{replicated}, {devices=[2,1]<=[2]}, {replicated}}").Validate(pair, 2).has_value());
  Status leaves = MustParse("{{replicated}, {replicated}}").Validate(pair, 2);
  ASSERT_FALSE(leaves.has_value());
  EXPECT_NE(leaves.error().message.find("has 3 leaves"), std::string::npos) << leaves.error().message;
  // A single sharding on a tuple applies to every leaf.
  EXPECT_TRUE(MustParse("{replicated}").Validate(pair, 2).has_value());
  EXPECT_EQ(MustParse("{replicated}").LeafShardings(pair).size(), 3u);
}

TEST(HloShardingTest, InstructionErrorsNameTheInstruction) {
  auto module = hlo::ParseModule(R"(
HloModule m, num_partitions=4
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2,2]<=[4]}
  ROOT n = f32[8] negate(p)
})");
  ASSERT_TRUE(module.has_value());
  auto sharding = InstructionSharding(*(*module)->entry()->parameters()[0], 4);
  ASSERT_FALSE(sharding.has_value());
  std::string text = sharding.error().ToString();
  EXPECT_NE(text.find("instruction %p: sharding {devices=[2,2]<=[4]}"), std::string::npos) << text;
  EXPECT_NE(text.find("has rank 2"), std::string::npos) << text;
  auto none = InstructionSharding(*(*module)->entry()->root(), 4);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

TEST(HloShardingTest, MapsDevicesToTilesAndShards) {
  // [[0,2],[1,3]]: device 2 holds tile (0,1).
  HloSharding s = MustParse("{devices=[2,2]<=[2,2]T(1,0)}");
  EXPECT_EQ(s.TileIndexOfDevice(2, 2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.TileIndexOfDevice(1, 2), (std::vector<int64_t>{1, 0}));
  // Partial replication: devices 0 and 1 hold the same tile.
  HloSharding partial = MustParse("{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(partial.TileIndexOfDevice(0, 2), partial.TileIndexOfDevice(1, 2));
  EXPECT_EQ(partial.TileIndexOfDevice(3, 2), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(partial.TileCounts(2), (std::vector<int64_t>{2, 1}));

  EXPECT_EQ(ShardShape(F32({16, 8}), s), F32({8, 4}));
  // Uneven: 10 over 4 is 3 per shard; the last shard has one real element.
  HloSharding four = MustParse("{devices=[4]<=[4]}");
  EXPECT_EQ(ShardShape(F32({10}), four), F32({3}));
  ShardExtent last = DeviceShardExtent(F32({10}), four, 3);
  EXPECT_EQ(last.offset, (std::vector<int64_t>{9}));
  EXPECT_EQ(last.valid, (std::vector<int64_t>{1}));
  ShardExtent third = DeviceShardExtent(F32({10}), four, 2);
  EXPECT_EQ(third.offset, (std::vector<int64_t>{6}));
  EXPECT_EQ(third.valid, (std::vector<int64_t>{3}));
  // 5 over 4 gives shards of 2: the last device holds padding only.
  EXPECT_EQ(DeviceShardExtent(F32({5}), four, 3).valid, (std::vector<int64_t>{0}));
}

TEST(HloShardingTest, BuildsShardingsFromDeviceTiles) {
  // Four devices, two tiles along dim 1, device d holding tile d % 2.
  std::vector<std::vector<int64_t>> index = {{0, 0}, {0, 1}, {0, 0}, {0, 1}};
  Result<HloSharding> s = HloSharding::FromDeviceTiles({1, 2}, index);
  ASSERT_TRUE(s.has_value()) << s.error();
  EXPECT_EQ(s->ToString(), "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}");
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(s->TileIndexOfDevice(d, 2), index[d]);
  // Tiles held by unequal numbers of devices cannot be written.
  EXPECT_FALSE(HloSharding::FromDeviceTiles({2}, {{0}, {0}, {0}, {1}}).has_value());
}

// Every sharding annotation in the corpus parses and fits its instruction
// (modules say how many partitions they run on, or imply it).
TEST(HloShardingTest, EveryCorpusAnnotationParses) {
  int annotations = 0;
  for (const auto& path : hlo::testing::CorpusModules()) {
    std::string text = hlo::testing::ReadTextFile(path);
    if (text.find("sharding=") == std::string::npos) continue;
    auto module = hlo::ParseModule(text, path.string());
    if (!module) continue;  // the parser's own tests cover modules that do not parse
    for (const auto& comp : (*module)->computations()) {
      for (const auto& instr : comp->instructions()) {
        const std::pmr::string* attr = instr->AttributeText("sharding");
        if (attr == nullptr) continue;
        ++annotations;
        Result<HloSharding> s = ParseSharding(*attr);
        EXPECT_TRUE(s.has_value()) << path << " %" << instr->name() << ": " << (s ? "" : s.error().ToString());
        if (s) {
          EXPECT_EQ(ParseSharding(s->ToString()).value_or(HloSharding::Unknown()), *s) << *attr;
        }
      }
    }
  }
  EXPECT_GT(annotations, 500);
}

}  // namespace
}  // namespace kiln::hlo
