#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::RunRoot;

// A 1-D convolution of f32[1,N,1] by f32[K,1,1] in b0f_0io->b0f form.
Result<hlo::Literal> Conv1D(const std::string& input, const std::string& kernel,
                            int64_t in_size, int64_t k_size, int64_t out_size,
                            const std::string& window) {
  std::string text = "HloModule m\nENTRY e {\n  x = f32[1," + std::to_string(in_size) +
                     ",1] parameter(0)\n  k = f32[" + std::to_string(k_size) +
                     ",1,1] parameter(1)\n  ROOT c = f32[1," + std::to_string(out_size) +
                     ",1] convolution(x, k), window={" + window +
                     "}, dim_labels=b0f_0io->b0f\n}\n";
  return RunRoot(text, {"f32[1," + std::to_string(in_size) + ",1] " + input,
                        "f32[" + std::to_string(k_size) + ",1,1] " + kernel});
}

std::vector<float> Values(const hlo::Literal& lit) {
  std::vector<float> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.Get<float>(i));
  return out;
}

TEST(ConvolutionTest, PaddingSame) {
  auto r = Conv1D("{{{1},{2},{3},{4},{5}}}", "{{{1}},{{0}},{{-1}}}", 5, 3, 5, "size=3 pad=1_1");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{-2, -2, -2, -2, 4}));
}

TEST(ConvolutionTest, Stride) {
  auto r = Conv1D("{{{1},{2},{3},{4},{5}}}", "{{{1}},{{2}},{{3}}}", 5, 3, 2, "size=3 stride=2");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{14, 26}));
}

TEST(ConvolutionTest, LhsDilation) {
  auto r = Conv1D("{{{1},{2},{3}}}", "{{{1}},{{10}}}", 3, 2, 4, "size=2 lhs_dilate=2");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{1, 20, 2, 30}));
}

TEST(ConvolutionTest, RhsDilation) {
  auto r = Conv1D("{{{1},{2},{3},{4}}}", "{{{1}},{{10}}}", 4, 2, 2, "size=2 rhs_dilate=2");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{31, 42}));
}

TEST(ConvolutionTest, WindowReversal) {
  auto r = Conv1D("{{{1},{2},{3}}}", "{{{1}},{{10}}}", 3, 2, 2, "size=2 rhs_reversal=1");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{12, 23}));
}

TEST(ConvolutionTest, NegativePaddingCropsInput) {
  auto r = Conv1D("{{{1},{2},{3},{4}}}", "{{{1}}}", 4, 1, 2, "size=1 pad=-1_-1");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Values(*r), (std::vector<float>{2, 3}));
}

TEST(ConvolutionTest, FeatureGroups) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[1,2,2] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f,
      feature_group_count=2
})", {"f32[1,2,2] {{{1,2},{3,4}}}", "f32[1,1,2] {{{10,100}}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[1,2,2] {{{10,200},{30,400}}}"));
}

TEST(ConvolutionTest, BatchGroups) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,2,1] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f,
      batch_group_count=2
})", {"f32[2,2,1] {{{1},{2}},{{3},{4}}}", "f32[1,1,2] {{{10,100}}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, LiteralOrDie("f32[1,2,2] {{{10,300},{20,400}}}"));
}

TEST(ConvolutionTest, IntegerAndBf16Results) {
  auto ints = RunRoot(R"(
HloModule m
ENTRY e {
  x = s8[1,3,1] parameter(0)
  k = s8[2,1,1] parameter(1)
  ROOT c = s32[1,2,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
})", {"s8[1,3,1] {{{100},{100},{-100}}}", "s8[2,1,1] {{{100}},{{100}}}"});
  ASSERT_TRUE(ints) << ints.error().message;
  EXPECT_EQ(*ints, LiteralOrDie("s32[1,2,1] {{{20000},{0}}}"));

  auto bf16 = RunRoot(R"(
HloModule m
ENTRY e {
  x = bf16[1,3,1] parameter(0)
  k = bf16[3,1,1] parameter(1)
  ROOT c = bf16[1,1,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
})", {"bf16[1,3,1] {{{256},{1},{1}}}", "bf16[3,1,1] {{{1}},{{1}},{{1}}}"});
  ASSERT_TRUE(bf16) << bf16.error().message;
  EXPECT_EQ(*bf16, LiteralOrDie("bf16[1,1,1] {{{258}}}"));
}

// 2-D convolution in NHWC and the same math in NCHW/OIHW, against a direct
// loop over the definition.
TEST(ConvolutionTest, TwoDimensionalLayoutsAgreeWithReference) {
  const int64_t n = 2, h = 5, w = 4, c = 3, o = 2, kh = 3, kw = 2;
  const int64_t oh = 3, ow = 2;  // stride 2x2, pad 1_1x0_1
  std::vector<float> in(n * h * w * c), ker(kh * kw * c * o);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7) % 11) - 5;
  for (size_t i = 0; i < ker.size(); ++i) ker[i] = static_cast<float>((i * 5) % 7) - 3;
  std::vector<float> expected(n * oh * ow * o, 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t f = 0; f < o; ++f) {
          float sum = 0;
          for (int64_t dy = 0; dy < kh; ++dy)
            for (int64_t dx = 0; dx < kw; ++dx)
              for (int64_t ci = 0; ci < c; ++ci) {
                int64_t iy = y * 2 + dy - 1, ix = x * 2 + dx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                sum += in[((b * h + iy) * w + ix) * c + ci] * ker[((dy * kw + dx) * c + ci) * o + f];
              }
          expected[((b * oh + y) * ow + x) * o + f] = sum;
        }
  hlo::Literal in_lit(hlo::Shape(hlo::PrimitiveType::kF32, {n, h, w, c}));
  hlo::Literal k_lit(hlo::Shape(hlo::PrimitiveType::kF32, {kh, kw, c, o}));
  for (size_t i = 0; i < in.size(); ++i) in_lit.Set<float>(i, in[i]);
  for (size_t i = 0; i < ker.size(); ++i) k_lit.Set<float>(i, ker[i]);

  auto module = testing::ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[2,5,4,3] parameter(0)
  k = f32[3,2,3,2] parameter(1)
  ROOT c = f32[2,3,2,2] convolution(x, k), window={size=3x2 stride=2x2 pad=1_1x0_1},
      dim_labels=b01f_01io->b01f
})");
  ASSERT_NE(module, nullptr);
  testing::ScalarTestContext ctx;
  const hlo::Literal* args[] = {&in_lit, &k_lit};
  auto nhwc = EvalConvolution(*module->entry()->root(), args, ctx);
  ASSERT_TRUE(nhwc) << nhwc.error().message;
  EXPECT_EQ(Values(*nhwc), expected);

  // Same data transposed to NCHW / OIHW, output NCHW.
  hlo::Literal in_nchw(hlo::Shape(hlo::PrimitiveType::kF32, {n, c, h, w}));
  hlo::Literal k_oihw(hlo::Shape(hlo::PrimitiveType::kF32, {o, c, kh, kw}));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t ci = 0; ci < c; ++ci)
          in_nchw.Set<float>(((b * c + ci) * h + y) * w + x, in[((b * h + y) * w + x) * c + ci]);
  for (int64_t dy = 0; dy < kh; ++dy)
    for (int64_t dx = 0; dx < kw; ++dx)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t f = 0; f < o; ++f)
          k_oihw.Set<float>(((f * c + ci) * kh + dy) * kw + dx,
                            ker[((dy * kw + dx) * c + ci) * o + f]);
  auto module2 = testing::ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[2,3,5,4] parameter(0)
  k = f32[2,3,3,2] parameter(1)
  ROOT c = f32[2,2,3,2] convolution(x, k), window={size=3x2 stride=2x2 pad=1_1x0_1},
      dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module2, nullptr);
  const hlo::Literal* args2[] = {&in_nchw, &k_oihw};
  auto nchw = EvalConvolution(*module2->entry()->root(), args2, ctx);
  ASSERT_TRUE(nchw) << nchw.error().message;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t f = 0; f < o; ++f)
          EXPECT_EQ(nchw->Get<float>(((b * o + f) * oh + y) * ow + x),
                    expected[((b * oh + y) * ow + x) * o + f]);
}

TEST(ConvolutionTest, MismatchedFeaturesIsAnError) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[1,2,3] parameter(0)
  k = f32[1,2,1] parameter(1)
  ROOT c = f32[1,2,1] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f
})", {"f32[1,2,3] {{{1,2,3},{4,5,6}}}", "f32[1,2,1] {{{1},{2}}}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("%c"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
