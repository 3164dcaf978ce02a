// Unit tests of the verifier's per-op shape checks for dot, elementwise, data
// movement and convolution: one bad module per kind of defect, whose error
// must name the right instruction and say what is wrong.
#include "compiler/hlo/verifier.h"

#include <gtest/gtest.h>


#include "compiler/hlo/verifier_test_util.h"

namespace kiln::hlo::verifier_testing {
namespace {

TEST(VerifierTest, RejectsDotContractingMismatch) {
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  a = f32[4,17] parameter(0)
  b = f32[16,8] parameter(1)
  ROOT dot.3 = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
      "dot.3",
      "lhs contracting dimension 1 has size 17 but rhs contracting dimension 0 has size 16"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[2,4,8] parameter(0)
  b = f32[3,8,5] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
)"),
                      "d",
                      "lhs batch dimension 0 has size 2 but rhs batch dimension 0 has size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
)"),
                      "d", "lhs_contracting_dims {2} has dimension 2 out of range for rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[5,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
                      "d", "result shape f32[5,4] does not match the expected f32[4,5]"));
}

TEST(VerifierTest, RejectsElementwiseMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  ROOT a = f32[2,3] add(x, y)
)"),
                      "a", "implicit broadcast is not allowed"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = s32[2,3] parameter(1)
  ROOT a = f32[2,3] multiply(x, y)
)"),
                      "a", "different element types"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] compare(x, x), direction=EQ
)"),
                      "c", "does not match the expected pred[2,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT c = pred[2,3] compare(x, x), direction=XX
)"),
                      "c", "attribute direction"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[2,3] parameter(0)
  ROOT c = pred[2,3] compare(x, x), direction=EQ, type=UNSIGNED
)"),
                      "c", "comparison type UNSIGNED"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  p = pred[] parameter(0)
  x = f32[2,3] parameter(1)
  ROOT s = f32[2,3] select(p, x, x)
)"),
                      "s", "select predicate pred[] must have the dimensions of f32[2,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  lo = f32[3] parameter(1)
  ROOT c = f32[2,3] clamp(lo, x, x)
)"),
                      "c", "clamp bounds must be scalars or match the operand"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[4] parameter(0)
  ROOT f = s32[4] floor(x)
)"),
                      "f", "floor expects floating-point operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = s32[3] convert(x)
)"),
                      "c", "does not match the expected s32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = s16[4] bitcast-convert(x)
)"),
                      "c", "does not match the expected s16[4,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s8[4,3] parameter(0)
  ROOT c = s32[4] bitcast-convert(x)
)"),
                      "c", "needs a last dimension of size 4"));
}

// A dynamic dimension's bound sizes its buffer: a result declaring another
// bound than its operands give is wrong even though any size up to either
// bound could fit. Found by fuzz/hlo_compile_fuzzer (kept as
// fuzz/regressions/hlo_compile/dynamic_bound_tuple_mismatch): the compiled
// executable did not load.
TEST(VerifierTest, RejectsDeclaredBoundsTheOperandsDoNotGive) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[<=3,<=4] parameter(0)
  doubled = s32[<=3,<=4] add(x, x)
  ROOT t = (s32[<=3,<=3]) tuple(doubled)
)"),
                      "t", "has other dimension bounds than the expected (s32[<=3,<=4])"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[<=8] parameter(0)
  ROOT n = f32[<=9] negate(x)
)"),
                      "n", "has other dimension bounds"));
}

// add-dependency passes its operand through: no precision change, even
// where mixed precision is allowed. Found by fuzz/hlo_compile_fuzzer (kept
// as fuzz/regressions/hlo_compile/add_dependency_changes_type).
TEST(VerifierTest, RejectsAddDependencyThatChangesTheType) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  p = f32[3] parameter(0)
  token0 = token[] after-all()
  ROOT add_dep = f64[3] add-dependency(p, token0)
)"),
                      "add_dep", "does not match the expected f32[3]"));
}

// Found by fuzz/hlo_compile_fuzzer (kept as fuzz/regressions/hlo_compile/
// unknown_operand_precision): the module verified, but its executable did
// not load.
TEST(VerifierTest, RejectsUnknownOperandPrecision) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highe,highest}
)"),
                      "d", "unknown precision 'highe'"));
}

TEST(VerifierTest, RejectsDataMovementMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[3,4] broadcast(x), dimensions={0,1}
)"),
                      "b", "operand dimension 0 has size 2 but result dimension 0 has size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,3,4] broadcast(x), dimensions={0,7}
)"),
                      "b", "out of range for rank 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,3,4] broadcast(x)
)"),
                      "b", "attribute dimensions: missing"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[7] reshape(x)
)"),
                      "r", "reshape changes the element count from 6 (f32[2,3]) to 7 (f32[7])"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(x), dimensions={1,1}
)"),
                      "t", "repeats a dimension"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT t = f32[2,3] transpose(x), dimensions={1,0}
)"),
                      "t", "does not match the expected f32[3,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={2}
)"),
                      "r", "out of range"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT s = f32[2,2] slice(x), slice={[0:2], [2:4]}
)"),
                      "s", "slice dimension 1 [2:4:1] exceeds the operand dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT s = f32[2] slice(x), slice={[0:2]}
)"),
                      "s", "slice has 1 dimensions but the operand f32[2,3] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  k = s32[] constant(0)
  ROOT d = f32[2,4] dynamic-slice(x, k, k), dynamic_slice_sizes={2,4}
)"),
                      "d",
                      "dynamic-slice size 4 of dimension 1 exceeds the operand dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  k = s32[] constant(0)
  ROOT d = f32[1,1] dynamic-slice(x, k), dynamic_slice_sizes={1,1}
)"),
                      "d",
                      "dynamic-slice has 1 start indices but the operand f32[2,3] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  u = f32[3,3] parameter(1)
  k = s32[] constant(0)
  ROOT d = f32[2,3] dynamic-update-slice(x, u, k, k)
)"),
                      "d", "update dimension 0 of size 3 exceeds the operand dimension size 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3,3] parameter(1)
  ROOT c = f32[2,6] concatenate(x, y), dimensions={1}
)"),
                      "c", "differs from operand 0 f32[2,3] in dimension 0"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[2,0] pad(x, z), padding=0_0x-2_-2
)"),
                      "p", "padding makes dimension 1 negative"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  ROOT i = s32[4,5] iota(), iota_dimension=2
)"),
                      "i", "iota_dimension 2 is out of range"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  t = (f32[2], f32[2]) tuple(x, x)
  ROOT g = f32[2] get-tuple-element(t), index=2
)"),
                      "g", "tuple index 2 is out of range for (f32[2], f32[2])"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  ROOT g = f32[2] get-tuple-element(x), index=0
)"),
                      "g", "is not a tuple"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  ROOT t = (f32[2], f32[3]) tuple(x, x)
)"),
                      "t", "does not match the expected (f32[2], f32[2])"));
}

TEST(VerifierTest, RejectsConvolutionMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,3] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
)"),
                      "c",
                      "lhs feature dimension has size 3, which divided by feature_group_count 1 "
                      "must equal the rhs input feature size 2"));
  EXPECT_TRUE(
      FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
)"),
              "c", "window size 2 of spatial dimension 0 does not match the rhs dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f
)"),
                      "c", "does not match the expected f32[1,6,6,4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[4,8,8,2] parameter(0)
  ker = f32[3,3,2,6] parameter(1)
  ROOT c = f32[1,6,6,6] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=4
)"),
                      "c", "must be divisible by feature_group_count 1 and batch_group_count 4"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01ff
)"),
                      "c", "repeats 'f'"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f
)"),
                      "c", "lhs f32[1,8,2] does not have the rank 4 of its dimension labels"));
}

}  // namespace
}  // namespace kiln::hlo::verifier_testing
