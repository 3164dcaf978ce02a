#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;

TEST(DotTest, MatrixTimesMatrix) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {"f32[2,3] {{1,2,3},{4,5,6}}", "f32[3,2] {{7,8},{9,10},{11,12}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2,2] {{58,64},{139,154}}"));
}

TEST(DotTest, TransposedContractingDims) {
  // lhs contracts its dim 0, rhs its dim 1: a^T * b^T.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[2,3] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})", {"f32[3,2] {{1,4},{2,5},{3,6}}", "f32[2,3] {{7,9,11},{8,10,12}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2,2] {{58,64},{139,154}}"));
}

TEST(DotTest, BatchDimsNotLeading) {
  // Batch dim is lhs dim 1 and rhs dim 2; result is [batch, m, n].
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[1,2,2] parameter(0)
  b = f32[2,1,2] parameter(1)
  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={2},
      lhs_contracting_dims={2}, rhs_contracting_dims={0}
})", {"f32[1,2,2] {{{1,2},{3,4}}}", "f32[2,1,2] {{{10,20}},{{30,40}}}"});
  ASSERT_TRUE(r) << r.error().message;
  // batch 0: [1,2].[10,30] = 70; batch 1: [3,4].[20,40] = 220.
  EXPECT_EQ(*r, LiteralOrDie("f32[2,1,1] {{{70}},{{220}}}"));
}

TEST(DotTest, TwoContractingDimsInSwappedOrder) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  b = s32[3,2] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={1,0}
})", {"s32[2,3] {{1,2,3},{4,5,6}}", "s32[3,2] {{1,10},{100,1000},{2,20}}"});
  ASSERT_TRUE(r) << r.error().message;
  // sum a[i][j] * b[j][i] = 1*1 + 2*100 + 3*2 + 4*10 + 5*1000 + 6*20.
  EXPECT_EQ(*r, LiteralOrDie("s32[] 5367"));
}

TEST(DotTest, IntegerDotWidensAndWraps) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = s8[1,2] parameter(0)
  b = s8[2,1] parameter(1)
  ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {"s8[1,2] {{-128,127}}", "s8[2,1] {{-128},{127}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("s32[1,1] {{32513}}"));

  auto wrapped = RunRoot(R"(
HloModule m
ENTRY e {
  a = u8[2] parameter(0)
  b = u8[2] parameter(1)
  ROOT d = u8[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})", {"u8[2] {200,3}", "u8[2] {2,1}"});
  ASSERT_TRUE(wrapped) << wrapped.error().message;
  EXPECT_EQ(*wrapped, LiteralOrDie("u8[] 147"));  // 403 mod 256
}

TEST(DotTest, Bf16RoundsOnceAtTheEnd) {
  // 256 + 1 + 1 is 258 in f32; rounding after each add would give 256.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = bf16[3] parameter(0)
  b = bf16[3] parameter(1)
  ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})", {"bf16[3] {256,1,1}", "bf16[3] {1,1,1}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("bf16[] 258"));

  auto tie = RunRoot(R"(
HloModule m
ENTRY e {
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})", {"bf16[2] {256,1}", "bf16[2] {1,1}"});
  ASSERT_TRUE(tie) << tie.error().message;
  EXPECT_EQ(*tie, LiteralOrDie("bf16[] 256"));  // 257 ties to even
}

TEST(DotTest, MixedPrecisionResult) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})", {"bf16[2] {256,1}", "bf16[2] {1,1}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[] 257"));
}

TEST(DotTest, ComplexDot) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = c64[2] parameter(0)
  b = c64[2] parameter(1)
  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})", {"c64[2] {(1,2),(0,1)}", "c64[2] {(3,4),(0,1)}"});
  ASSERT_TRUE(r) << r.error().message;
  // (1+2i)(3+4i) + i*i = (3-8-1) + (4+6)i.
  EXPECT_EQ(*r, LiteralOrDie("c64[] (-6, 10)"));
}

TEST(DotTest, EmptyContractionGivesZeros) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[2,0] parameter(0)
  b = f32[0,3] parameter(1)
  ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {"f32[2,0] {{},{}}", "f32[0,3] {}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[2,3] {{0,0,0},{0,0,0}}"));
}

TEST(DotTest, MismatchedContractingSizesIsAnError) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {"f32[2,3] {{1,2,3},{4,5,6}}", "f32[2,2] {{1,2},{3,4}}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("%d"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("contracting"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
