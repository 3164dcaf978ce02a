#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;
using testing::ScalarTestContext;


TEST(GatherTest, OutOfBoundsStartIsClamped) {
  // One index vector {row, col}; too-large and negative starts clamp.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2}
})", {"s32[3,3] {{1,2,3},{4,5,6},{7,8,9}}", "s32[2,2] {{5,5},{-4,-1}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[2,2] {{8,9},{1,2}}"));
}

TEST(GatherTest, BatchingDims) {
  // Each batch row b gathers operand[b, idx[b]].
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1},
      start_index_map={1}, index_vector_dim=1, slice_sizes={1,1},
      operand_batching_dims={0}, start_indices_batching_dims={0}
})", {"f32[2,3] {{1,2,3},{4,5,6}}", "s32[2,1] {{2},{0}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2] {3, 4}"));
}

TEST(GatherTest, WrongResultShapeIsAnError) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = s32[3] gather(x, i), offset_dims={0}, collapsed_slice_dims={0},
      start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,2}
})", {"s32[3,3] {{1,2,3},{4,5,6},{7,8,9}}", "s32[2] {0,0}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("%g"), std::string::npos) << r.error().message;
}

// Found by fuzz/hlo_compile_fuzzer (fuzz/regressions/hlo_compile/
// gather_empty_collapsed_slice): slice size 0 in a collapsed dimension
// verifies, but the start was clamped to [0, 1] in a dimension of size 1
// and the gather read past the operand.
TEST(GatherTest, EmptySlicesWithAResultToFillAreAnError) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = s32[1,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = s32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={0,3}
})", {"s32[1,3] {{1,2,3}}", "s32[2] {1, 0}"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "instruction %g (gather): slice_sizes {0,3} is 0 in operand dimension 0, so every slice is empty, "
            "but the result s32[2,3] has elements");
}

// Found by fuzz/hlo_compile_fuzzer (fuzz/regressions/hlo_compile/
// gather_changes_type): a gather from f64 into f32 verifies (mixed
// precision), but its elements were copied 8 bytes at a time into 4-byte
// slots, past the result's end.
TEST(GatherTest, GatherThatChangesTheElementTypeIsRefused) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f64[2,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})", {"f64[2,3] {{1,2,3},{4,5,6}}", "s32[2] {1, 0}"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "instruction %g (gather): gather of a f64 operand into a f32 result (mixed precision) is not supported "
            "by the evaluator; convert the operand first");
}

constexpr char kScatterAdd[] = R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[3] parameter(1)
  u = s32[3,3] parameter(2)
  ROOT s = s32[3,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";

TEST(ScatterTest, AddsRowsAndSkipsOutOfBounds) {
  // Row index 3 and -1 are out of bounds: those updates are dropped; row 0 is
  // updated twice.
  auto r = RunRoot(kScatterAdd, {"s32[3,3] {{1,1,1},{1,1,1},{1,1,1}}", "s32[3] {0,3,0}",
                                 "s32[3,3] {{1,2,3},{10,20,30},{100,200,300}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[3,3] {{102,203,304},{1,1,1},{1,1,1}}"));
  auto neg = RunRoot(kScatterAdd, {"s32[3,3] {{1,1,1},{1,1,1},{1,1,1}}", "s32[3] {-1,2,2}",
                                   "s32[3,3] {{1,2,3},{10,20,30},{100,200,300}}"});
  ASSERT_TRUE(neg) << neg.error().message;
  EXPECT_EQ(*neg, LiteralOrDie("s32[3,3] {{1,1,1},{1,1,1},{111,221,331}}"));
}

TEST(ScatterTest, PartialWindowOutOfBoundsIsSkippedWhole) {
  auto r = RunRoot(R"(
HloModule m
upd {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2,2] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=upd
})", {"f32[4] {0,0,0,0}", "s32[2,1] {{3},{1}}", "f32[2,2] {{5,6},{7,8}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[4] {0,7,8,0}"));
}

TEST(ScatterTest, GeneralCombinerThroughContext) {
  ScalarTestContext ctx;
  auto r = RunRoot(R"(
HloModule m
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  i = s32[2] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sub
})", {"f32[3] {10,10,10}", "s32[2] {2,2}", "f32[2] {1,2}"}, &ctx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[3] {10,10,7}"));
  EXPECT_EQ(ctx.calls, 2);
}

}  // namespace
}  // namespace kiln::runtime
