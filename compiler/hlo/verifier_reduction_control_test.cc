// Unit tests of the verifier's per-op shape checks for reductions, gather and
// scatter, control flow and calls: one bad module per kind of defect, whose
// error must name the right instruction and say what is wrong.
#include "compiler/hlo/verifier.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/verifier_test_util.h"

namespace kiln::hlo::verifier_testing {
namespace {

TEST(VerifierTest, RejectsReductionMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=less
)"),
                      "r", "reducer parameter 0 f32[] differs from its result pred[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={0}, to_apply=add
)"),
                      "r", "does not match the expected f32[3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={3}, to_apply=add
)"),
                      "r", "reduce dimensions {3} has dimension 3 out of range for rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z, z), dimensions={0}, to_apply=add
)"),
                      "r", "even, non-zero number of operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[2,3] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(x, z), dimensions={0}, to_apply=add
)"),
                      "r", "init value 0 s32[] differs from the reducer result f32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=1x1}, to_apply=add
)"),
                      "r", "does not match the expected f32[3,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2 stride=2}, to_apply=add
)"),
                      "r", "window has 1 dimensions but the operand f32[4,4] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  src = f32[3,3] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[4,4] select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
)"),
                      "s", "source f32[3,3] does not match the windowed operand shape f32[2,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT m = f32[4] map(x), dimensions={0}, to_apply=add
)"),
                      "m", "map computation takes 2 parameters but map has 1 operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=add
)"),
                      "s", "sort comparator must return pred[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={1}, to_apply=less
)"),
                      "s", "sort dimension 1 is out of range"));
}

TEST(VerifierTest, RejectsGatherAndScatterMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,7}
)"),
                      "g", "collapsed or batching dimension 0 must have slice size 0 or 1, has 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,2] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "start_index_map {0} has 1 entries but the index vector has size 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = f32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "gather indices must be integers"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "attribute start_index_map: missing"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[4,7] parameter(2)
  ROOT s = f32[5,7] scatter(operand, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)"),
      "s", "updates scatter dimension 0 has size 4 but the matching indices dimension has size 3"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3,8] parameter(2)
  ROOT s = f32[5,7] scatter(operand, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)"),
      "s", "updates window dimension 1 has size 8, larger than operand dimension 1 of size 7"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[4,5,7] parameter(0)
  idx = s32[3,3,1] parameter(1)
  ROOT g = f32[3,3,7] gather(operand, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,7}, operand_batching_dims={0}, start_indices_batching_dims={0}
)"),
      "g", "operand batching dimension 0 has size 4 but indices batching dimension 0 has size 3"));
}

TEST(VerifierTest, RejectsControlFlowAndCallMismatches) {
  const std::string loops = R"(
bad_cond {
  st = f32[4] parameter(0)
  ROOT z = s32[] constant(0)
}

cond {
  st = f32[4] parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  st = f32[4] parameter(0)
  ROOT r = f32[3] slice(st), slice={[0:3]}
}

same_body {
  st = f32[4] parameter(0)
  ROOT n = f32[4] negate(st)
}

branch {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

fused {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
)";
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT w = f32[4] while(x), condition=bad_cond, body=same_body
)",
                                loops),
                      "w", "while condition must return pred[], returns s32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT w = f32[4] while(x), condition=cond, body=body
)",
                                loops),
                      "w", "body result f32[3] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[3] parameter(0)
  ROOT w = f32[3] while(x), condition=cond, body=same_body
)",
                                loops),
                      "w", "operand f32[3] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  s = f32[] parameter(1)
  ROOT c = f32[4] conditional(s, x, x), true_computation=branch, false_computation=branch
)",
                                loops),
                      "c", "selector must be pred[] or s32[], got f32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  y = f32[5] parameter(1)
  i = s32[] parameter(2)
  ROOT c = f32[4] conditional(i, x, y), branch_computations={branch, branch}
)",
                                loops),
                      "c", "operand 2 f32[5] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x, x), to_apply=branch
)",
                                loops),
                      "c",
                      "computation %branch takes 1 parameters but the instruction has 2 operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[5] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
)",
                                loops),
                      "f", "operand 0 (parameter of %fused) f32[5] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kSideways, calls=fused
)",
                                loops),
                      "f", "attribute kind"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT f = f32[5] fusion(x), kind=kLoop, calls=fused
)",
                                loops),
                      "f", "does not match the expected f32[4]"));
}

}  // namespace
}  // namespace kiln::hlo::verifier_testing
