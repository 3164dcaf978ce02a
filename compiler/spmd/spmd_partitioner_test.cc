#include "compiler/spmd/spmd_partitioner.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/spmd/partition_test_util.h"

namespace kiln::spmd {
namespace {

using hlo::Opcode;
using testing::CountOpcode;
using testing::EntryWhile;
using testing::ParseOrDie;
using testing::PartitionOrFail;
using testing::SameValuesPartitioned;

std::string ParameterShape(const hlo::Module& module, int64_t i) {
  return module.entry()->parameters()[i]->shape().ToString();
}

TEST(SpmdPartitionerTest, ElementwiseStaysLocal) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=4
ENTRY e {
  a = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  b = f32[8,6] parameter(1), sharding={devices=[2,2]<=[4]}
  m = f32[8,6] multiply(a, b)
  ROOT e = f32[8,6] exponential(m), sharding={devices=[2,2]<=[4]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 4);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(partitioned->entry()->name(), "e_spmd");
  EXPECT_EQ(ParameterShape(*partitioned, 0), "f32[4,3]");
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "f32[4,3]");
  EXPECT_EQ(partitioned->entry()->instruction_count(), 4);
  EXPECT_TRUE(IsPartitioned(*partitioned));
  EXPECT_TRUE(SameValuesPartitioned(*module, 4));
}

TEST(SpmdPartitionerTest, ReshardsByGatheringAndSlicing) {
  // Rows over 4 to columns over 4, then to replicated: all-gathers and a
  // partition-id slice.
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=4
ENTRY e {
  a = f32[8,12] parameter(0), sharding={devices=[4,1]<=[4]}
  n = f32[8,12] negate(a), sharding={devices=[1,4]<=[4]}
  ROOT r = f32[8,12] abs(n), sharding={replicated}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 4);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllGather), 2);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kPartitionId), 1);
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "f32[8,12]");
  EXPECT_TRUE(SameValuesPartitioned(*module, 4));
}

TEST(SpmdPartitionerTest, UnevenShardsArePaddedAndMasked) {
  // 10 rows over 4 partitions: shards of 3, the last holding 1 row. The
  // reduce over rows must not count the padding (exp(0) = 1 there), the dot
  // over a cut contracting dimension neither. (Like XLA, the partitioner
  // takes a reduce's init value to be its reducer's identity.)
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[10,3] parameter(0), sharding={devices=[4,1]<=[4]}
  y = f32[10,5] parameter(1), sharding={devices=[4,1]<=[4]}
  ex = f32[10,3] exponential(x)
  zero = f32[] constant(0)
  sum = f32[3] reduce(ex, zero), dimensions={0}, to_apply=add
  dot = f32[3,5] dot(ex, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[3], f32[3,5]) tuple(sum, dot)
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 4);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(ParameterShape(*partitioned, 0), "f32[3,3]");
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllReduce), 2);
  EXPECT_TRUE(SameValuesPartitioned(*module, 4));
}

TEST(SpmdPartitionerTest, ReducesAcrossTiledDimensionsWithReplicas) {
  // Rows over 2, replicated over 2: the all-reduce groups hold one device
  // per row tile, so replicas are not counted twice.
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=4
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  init = f32[] constant(-inf)
  ROOT r = f32[6] reduce(x, init), dimensions={0}, to_apply=max
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 4);
  ASSERT_NE(partitioned, nullptr);
  std::string text = hlo::PrintModule(*partitioned);
  EXPECT_NE(text.find("replica_groups={{0,2},{1,3}}"), std::string::npos) << text;
  EXPECT_TRUE(SameValuesPartitioned(*module, 4));
}

TEST(SpmdPartitionerTest, BroadcastTransposeAndReshapeCarryTiles) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
ENTRY e {
  v = f32[6] parameter(0), sharding={devices=[2]<=[2]}
  b = f32[6,4] broadcast(v), dimensions={0}
  t = f32[4,6] transpose(b), dimensions={1,0}
  r = f32[4,2,3] reshape(t)
  ROOT s = f32[4,2,3] sine(r), sharding={devices=[1,2,1]<=[2]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllGather), 0);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllReduce), 0);
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "f32[4,1,3]");
  EXPECT_TRUE(SameValuesPartitioned(*module, 2));
}

TEST(SpmdPartitionerTest, WhileLoopsCarryShardedState) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[8] add(x, x)
  ROOT t = (s32[], f32[8]) tuple(j, y)
}
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, p)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1, sharding={devices=[2]<=[2]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllGather), 0);
  const hlo::Instruction* loop = EntryWhile(*partitioned);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->shape().ToString(), "(s32[], f32[4])");
  EXPECT_TRUE(SameValuesPartitioned(*module, 2));
}

// A scan saves each step's batch-tiled activations into a stacked buffer
// that starts as an unannotated broadcast: the loop keeps the stack tiled
// like what is written into it, so no step gathers its update, and the
// broadcast is built tiled.
TEST(SpmdPartitionerTest, ScanStacksStayTiledLikeTheirUpdates) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
cond {
  s = (s32[], f32[4,6], f32[3,4,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4,6], f32[3,4,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4,6] get-tuple-element(s), index=1
  stack = f32[3,4,6] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4,6] multiply(x, x)
  row = f32[1,4,6] reshape(y)
  zero = s32[] constant(0)
  saved = f32[3,4,6] dynamic-update-slice(stack, row, i, zero, zero)
  ROOT t = (s32[], f32[4,6], f32[3,4,6]) tuple(j, y, saved)
}
ENTRY e {
  p = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  zero = s32[] constant(0)
  f0 = f32[] constant(0)
  empty = f32[3,4,6] broadcast(f0), dimensions={}
  init = (s32[], f32[4,6], f32[3,4,6]) tuple(zero, p, empty)
  w = (s32[], f32[4,6], f32[3,4,6]) while(init), condition=cond, body=body
  ROOT r = f32[3,4,6] get-tuple-element(w), index=2
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  const hlo::Instruction* loop = EntryWhile(*partitioned);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->shape().ToString(), "(s32[], f32[2,6], f32[3,2,6])");
  // Each device builds its part of the empty stack; none slices a whole one.
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kDynamicSlice), 0) << hlo::PrintModule(*partitioned);
  for (const hlo::Computation* callee : loop->called_computations()) {
    for (const auto& instr : callee->instructions()) {
      EXPECT_NE(instr->opcode(), Opcode::kAllGather) << hlo::PrintModule(*partitioned);
    }
  }
  EXPECT_TRUE(SameValuesPartitioned(*module, 2));
}

// An embedding lookup: batch-tiled token ids index a whole table, so each
// device gathers its own rows and nothing moves between devices.
TEST(SpmdPartitionerTest, GathersFromAWholeTableWhereTheIndicesLie) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
ENTRY e {
  table = f32[10,6] parameter(0)
  ids = s32[4,3,1] parameter(1), sharding={devices=[2,1,1]<=[2]}
  rows = f32[4,3,6] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,6}
  ROOT scaled = f32[4,3,6] add(rows, rows), sharding={devices=[2,1,1]<=[2]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllGather), 0) << hlo::PrintModule(*partitioned);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kDynamicSlice), 0) << hlo::PrintModule(*partitioned);
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "f32[2,3,6]");
  EXPECT_TRUE(SameValuesPartitioned(*module, 2));
}

// Loops nested 40 deep, each body running two loops over the same inner
// body, and each body tiling its state a round at a time (b takes a's
// tiles): propagation walks each body once per state it is given, so this
// partitions at once (walking it again per caller and round would take
// 4^40 walks).
TEST(SpmdPartitionerTest, DeeplyNestedLoopsArePropagatedOncePerBodyAndState) {
  constexpr int kDepth = 40;
  const std::string state = "(s32[], f32[8], f32[8])";
  std::string text = "HloModule nested, num_partitions=2\n";
  for (int k = kDepth - 1; k >= 0; --k) {
    const std::string n = std::to_string(k), inner = std::to_string(k + 1);
    text += "cond" + n + " {\n  s = " + state + " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n" +
            "  n = s32[] constant(2)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n";
    text += "body" + n + " {\n  s = " + state + " parameter(0)\n";
    std::string from = "s";
    if (k + 1 < kDepth) {
      text += "  w1 = " + state + " while(s), condition=cond" + inner + ", body=body" + inner + "\n";
      text += "  w2 = " + state + " while(w1), condition=cond" + inner + ", body=body" + inner + "\n";
      from = "w2";
    }
    text += "  i = s32[] get-tuple-element(" + from + "), index=0\n  a = f32[8] get-tuple-element(" + from +
            "), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  b = f32[8] negate(a)\n" +
            "  ROOT t = " + state + " tuple(j, a, b)\n}\n";
  }
  text += "ENTRY e {\n  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}\n  q = f32[8] parameter(1)\n" +
          std::string("  zero = s32[] constant(0)\n  init = ") + state + " tuple(zero, p, q)\n  w = " + state +
          " while(init), condition=cond0, body=body0\n  ROOT r = f32[8] get-tuple-element(w), index=2\n}\n";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  const hlo::Instruction* loop = EntryWhile(*partitioned);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->shape().ToString(), "(s32[], f32[4], f32[4])");
}

// A donated argument stays donated: each partition may write its shard of
// the result where its shard of the argument lies (an optimizer step's new
// weights take no memory of their own on any chip).
TEST(SpmdPartitionerTest, DonatedArgumentsStayDonated) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  w = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  g = f32[8,4] parameter(1), sharding={devices=[2,1]<=[2]}
  updated = f32[8,4] subtract(w, g)
  ROOT r = (f32[8,4]) tuple(updated), sharding={{devices=[2,1]<=[2]}}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  const hlo::Attribute* original = module->FindAttribute("input_output_alias");
  const hlo::Attribute* kept = partitioned->FindAttribute("input_output_alias");
  ASSERT_NE(original, nullptr);
  ASSERT_NE(kept, nullptr) << hlo::PrintModule(*partitioned);
  EXPECT_EQ(kept->value, original->value);
  EXPECT_TRUE(SameValuesPartitioned(*module, 2));
}

TEST(SpmdPartitionerTest, CallsAndConditionalsArePartitioned) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
double {
  x = f32[8] parameter(0)
  ROOT y = f32[8] add(x, x)
}
negate {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}
ENTRY e {
  p = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  q = pred[] parameter(1)
  c = f32[8] call(p), to_apply=double
  ROOT k = f32[8] conditional(q, c, c), true_computation=double, false_computation=negate,
      sharding={devices=[2]<=[2]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(partitioned->entry()->root()->shape().ToString(), "f32[4]");
  EXPECT_TRUE(SameValuesPartitioned(*module, 2, 1));
  EXPECT_TRUE(SameValuesPartitioned(*module, 2, 2));
}

TEST(SpmdPartitionerTest, MaximalValuesAreBroadcastFromTheirDevice) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
ENTRY e {
  a = f32[4] parameter(0), sharding={maximal device=1}
  b = f32[4] parameter(1), sharding={devices=[2]<=[2]}
  ROOT s = f32[4] add(a, b), sharding={devices=[2]<=[2]}
})");
  ASSERT_NE(module, nullptr);
  auto partitioned = PartitionOrFail(*module, 2);
  ASSERT_NE(partitioned, nullptr);
  EXPECT_EQ(CountOpcode(*partitioned, Opcode::kAllReduce), 1);
  // Only device 1 is given the maximal argument; device 0's copy is zeros.
  auto args = runtime::io::RandomArguments(*module, 3);
  ASSERT_TRUE(args.has_value());
  auto split = SplitArguments(*module, *args, 2);
  ASSERT_TRUE(split.has_value());
  (*split)[0][0] = hlo::Literal((*args)[0].shape());
  auto results = runtime::EvaluateOnSlice(*partitioned, runtime::SliceShape{1, 2}, *split);
  ASSERT_TRUE(results.has_value()) << results.error();
  auto whole = runtime::EvaluateModule(*module, *args);
  ASSERT_TRUE(whole.has_value());
  auto assembled = hlo::AssembleLiteral(*results, module->entry()->root()->shape(),
                                   *hlo::ParseSharding("{devices=[2]<=[2]}"));
  ASSERT_TRUE(assembled.has_value()) << assembled.error();
  EXPECT_TRUE(runtime::io::CompareLiterals(*whole, *assembled).has_value());
}

TEST(SpmdPartitionerTest, BadShardingsAreClearErrors) {
  auto wrong_count = ParseOrDie(R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT n = f32[8] negate(a), sharding={devices=[4]<=[4]}
})");
  ASSERT_NE(wrong_count, nullptr);
  auto failed = PartitionModule(*wrong_count, 2);
  ASSERT_FALSE(failed.has_value());
  std::string text = failed.error().ToString();
  EXPECT_NE(text.find("instruction %n"), std::string::npos) << text;
  EXPECT_NE(text.find("holds 4 devices but the module runs on 2 partitions"), std::string::npos) << text;

  auto wrong_rank = ParseOrDie(R"(
HloModule m, num_partitions=2
ENTRY e {
  ROOT a = f32[8] parameter(0), sharding={devices=[2,1]<=[2]}
})");
  ASSERT_NE(wrong_rank, nullptr);
  failed = PartitionModule(*wrong_rank, 2);
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().ToString().find("instruction %a"), std::string::npos) << failed.error();

  // The header says 4 partitions.
  auto header = ParseOrDie(R"(
HloModule m, num_partitions=4
ENTRY e {
  ROOT a = f32[8] parameter(0), sharding={devices=[4]<=[4]}
})");
  ASSERT_NE(header, nullptr);
  failed = PartitionModule(*header, 2);
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().ToString().find("num_partitions=4"), std::string::npos) << failed.error();
}

TEST(SpmdPartitionerTest, CollectivesOutsideShardMapAreRefused) {
  auto module = ParseOrDie(R"(
HloModule m, num_partitions=2
ENTRY e {
  a = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT id = u32[] partition-id()
})");
  ASSERT_NE(module, nullptr);
  // partition-id makes the module a per-device program already.
  EXPECT_TRUE(IsPartitioned(*module));
  auto failed = PartitionModule(*module, 2);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace kiln::spmd
