#include "compiler/spmd/sharding_propagation.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::spmd {
namespace {

class PropagationTest : public ::testing::Test {
 protected:
  // Parses `text` and propagates over its entry on `devices` partitions.
  void Propagate(std::string_view text, int64_t devices) {
    auto module = hlo::ParseModule(text);
    ASSERT_TRUE(module.has_value()) << module.error();
    module_ = std::move(*module);
    auto map = PropagateShardings(*module_->entry(), {}, devices);
    ASSERT_TRUE(map.has_value()) << map.error();
    map_ = std::move(*map);
  }
  std::string Of(std::string_view name) const {
    for (const auto& comp : module_->computations()) {
      for (const auto& instr : comp->instructions()) {
        if (instr->name() == name && map_.contains(instr.get())) return map_.at(instr.get()).ToString();
      }
    }
    return "<none>";
  }

  std::unique_ptr<hlo::Module> module_;
  ShardingMap map_;
};

TEST_F(PropagationTest, ForwardThroughElementwiseBroadcastTransposeAndReduce) {
  Propagate(R"(
HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  n = f32[8,4] negate(p)
  t = f32[4,8] transpose(n), dimensions={1,0}
  b = f32[3,4,8] broadcast(t), dimensions={1,2}
  zero = f32[] constant(0)
  r = f32[3,4] reduce(b, zero), dimensions={2}, to_apply=add
  k = f32[4,8] reduce(b, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[3,4], f32[4,8]) tuple(r, k)
})",
            2);
  EXPECT_EQ(Of("n"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Of("t"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(Of("b"), "{devices=[1,1,2]<=[2]}");
  // Reducing the tiled dimension leaves the result replicated.
  EXPECT_EQ(Of("r"), "{replicated}");
  EXPECT_EQ(Of("k"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(Of("zero"), "{replicated}");
}

TEST_F(PropagationTest, BackwardFromAnnotatedUsers) {
  Propagate(R"(
HloModule m, num_partitions=4
ENTRY e {
  c = f32[] constant(2)
  b = f32[16,8] broadcast(c), dimensions={}
  p = f32[16,8] parameter(0)
  m = f32[16,8] multiply(b, p)
  ROOT r = f32[128] reshape(m), sharding={devices=[4]<=[4]}
})",
            4);
  // The reshape keeps dim 0's tiles: 16 rows of 8 become 128 in four runs.
  EXPECT_EQ(Of("m"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Of("b"), "{devices=[4,1]<=[4]}");
  // An unannotated entry parameter stays replicated; a scalar cannot be tiled.
  EXPECT_EQ(Of("p"), "{replicated}");
  EXPECT_EQ(Of("c"), "{replicated}");
}

TEST_F(PropagationTest, DotCombinesOperandTiles) {
  Propagate(R"(
HloModule m, num_partitions=4
ENTRY e {
  lhs = f32[16,8] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  rhs = f32[8,4] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT dot = f32[16,4] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
            4);
  // lhs rows by device / 2, rhs columns by device % 2: together a 2x2 tiling.
  EXPECT_EQ(Of("dot"), "{devices=[2,2]<=[4]}");
}

TEST_F(PropagationTest, DotFallsBackToOneOperandWhenTilesOverlap) {
  Propagate(R"(
HloModule m, num_partitions=4
ENTRY e {
  lhs = f32[2,16,48] parameter(0), sharding={devices=[1,4,1]<=[4]}
  rhs = f32[48,192] parameter(1), sharding={devices=[1,4]<=[4]}
  ROOT dot = f32[2,16,192] dot(lhs, rhs), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})",
            4);
  EXPECT_EQ(Of("dot"), "{devices=[1,4,1]<=[4]}");
}

TEST_F(PropagationTest, ManualSpreadsAndTuplesPassThrough) {
  Propagate(R"(
HloModule m, num_partitions=2
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  s = f32[4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[4] negate(s)
  t = (f32[4], f32[8]) tuple(n, p)
  g = f32[8] get-tuple-element(t), index=1
  ROOT a = f32[8] add(g, g)
})",
            2);
  EXPECT_EQ(Of("n"), "{manual}");
  EXPECT_EQ(Of("t"), "{{manual}, {devices=[2]<=[2]}}");
  EXPECT_EQ(Of("g"), "{devices=[2]<=[2]}");
  EXPECT_EQ(Of("a"), "{devices=[2]<=[2]}");
}

TEST_F(PropagationTest, CallsTakeTheCalleeRootSharding) {
  Propagate(R"(
HloModule m, num_partitions=2
body {
  x = f32[8] parameter(0)
  ROOT y = f32[8] exponential(x)
}
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT c = f32[8] call(p), to_apply=body
})",
            2);
  EXPECT_EQ(Of("c"), "{devices=[2]<=[2]}");
}

TEST_F(PropagationTest, BadAnnotationNamesTheInstruction) {
  auto module = hlo::ParseModule(R"(
HloModule m, num_partitions=4
ENTRY e {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p), sharding={devices=[2]<=[2]}
})");
  ASSERT_TRUE(module.has_value());
  auto map = PropagateShardings(*(*module)->entry(), {}, 4);
  ASSERT_FALSE(map.has_value());
  EXPECT_NE(map.error().ToString().find("instruction %n"), std::string::npos) << map.error();
  EXPECT_NE(map.error().ToString().find("runs on 4 partitions"), std::string::npos) << map.error();
}

}  // namespace
}  // namespace kiln::spmd
