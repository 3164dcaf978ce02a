// The speed-related parts of elementwise evaluation: the vectorized
// maximum/minimum keep NaN and signed-zero rules at every position of a
// vector and its tail, regions reuse scratch chunks without clobbering live
// values, results of the large-block size class come out right (also when a
// freed block is reused), and large regions run in parts over host cores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/host_cores_testing.h"
#include "runtime/eval/computation_plan.h"
#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;

template <typename F>
hlo::Literal Array(hlo::PrimitiveType type, const std::vector<F>& values) {
  hlo::Literal lit(hlo::Shape(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<F>(static_cast<int64_t>(i), values[i]);
  return lit;
}

// IEEE 754-2019 maximum/minimum for checking.
template <typename F>
F Reference(F a, F b, bool maximum) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
  if (a == b) return (std::signbit(a) == maximum) ? b : a;  // +0 wins max, -0 wins min
  return (maximum ? a > b : a < b) ? a : b;
}

template <typename F>
void CheckMaxMin(hlo::PrimitiveType type, const char* type_name) {
  const F nan = std::numeric_limits<F>::quiet_NaN();
  const F inf = std::numeric_limits<F>::infinity();
  const std::vector<F> pool = {nan, -0.0, 0.0, 1.5, -2.0, inf, -inf, 7.0};
  // 67 elements: every pair of the pool lands in vector bodies and the tail.
  std::vector<F> a, b;
  for (int i = 0; i < 67; ++i) {
    a.push_back(pool[i % pool.size()]);
    b.push_back(pool[(i / pool.size()) % pool.size()]);
  }
  for (bool maximum : {true, false}) {
    const std::string t = std::string(type_name) + "[67]";
    auto r = testing::Run(
        OneOp(t + " a, " + t + " b", t, std::string(maximum ? "maximum" : "minimum") + "(a, b)"),
        {Array(type, a), Array(type, b)});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    for (size_t i = 0; i < a.size(); ++i) {
      const F got = r->template Get<F>(static_cast<int64_t>(i));
      const F want = Reference(a[i], b[i], maximum);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << i << ": " << a[i] << ", " << b[i];
      } else {
        EXPECT_EQ(got, want) << i << ": " << a[i] << ", " << b[i];
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << i << ": " << a[i] << ", " << b[i];
      }
    }
  }
}

TEST(ElementwiseRegionTest, VectorizedMaxMinKeepNanAndZeroRulesF32) {
  CheckMaxMin<float>(hlo::PrimitiveType::kF32, "f32");
}

TEST(ElementwiseRegionTest, VectorizedMaxMinKeepNanAndZeroRulesF64) {
  CheckMaxMin<double>(hlo::PrimitiveType::kF64, "f64");
}

TEST(ElementwiseRegionTest, ClampUsesTheSameRules) {
  EXPECT_EQ(testing::RunToText(OneOp("f32[] lo, f32[4] x, f32[] hi", "f32[4]", "clamp(lo, x, hi)"),
                               {testing::Lit("f32[] -0.0"), testing::Lit("f32[4] {nan, 0, -1, 5}"),
                                testing::Lit("f32[] 2")}),
            "f32[4] {nan, 0, -0.0, 2}");
}

// A long chain over several element widths, longer than one chunk, so that
// scratch chunks are reused while other values are still live.
TEST(ElementwiseRegionTest, ScratchReuseKeepsLiveValues) {
  const int64_t n = 3 * kElementwiseChunk + 17;
  const std::string f = "f32[" + std::to_string(n) + "]";
  const std::string d = "f64[" + std::to_string(n) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + f + " parameter(0)\n" + "  a = " + f +
                          " add(x, x)\n" +                        // 2x, read at the end
                          "  b = " + d + " convert(a)\n" +        // 2x as f64
                          "  c = " + d + " multiply(b, b)\n" +    // 4x^2
                          "  e = " + f + " convert(c)\n" +        // 4x^2
                          "  g = " + f + " negate(e)\n" +         // -4x^2
                          "  h = " + f + " subtract(g, x)\n" +    // -4x^2 - x
                          "  ROOT r = " + f + " add(h, a)\n}\n";  // -4x^2 + x
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  auto r = testing::Run(hlo, {Array(hlo::PrimitiveType::kF32, x)});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  for (int64_t i = 0; i < n; ++i) {
    const float a = x[i] + x[i];
    const float e = static_cast<float>(static_cast<double>(a) * static_cast<double>(a));
    ASSERT_EQ(r->Get<float>(i), (-e - x[i]) + a) << i;
  }
}

TEST(ElementwiseRegionTest, ScratchIsSharedOnceValuesDie) {
  auto module = hlo::ParseModule(R"(
HloModule m
ENTRY e {
  x = f32[100] parameter(0)
  a = f32[100] negate(x)
  b = f32[100] abs(a)
  c = f32[100] negate(b)
  d = f32[100] abs(c)
  ROOT r = f32[100] add(d, x)
})");
  ASSERT_TRUE(module.has_value());
  auto plan = BuildComputationPlan(*(*module)->entry());
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  ASSERT_EQ((*plan)->regions.size(), 1u);
  // a..d are temporaries; at most two are live at once.
  EXPECT_EQ((*plan)->regions[0].scratch_bytes, 2 * kElementwiseChunk * 4);
}

// 2M f32 = 8 MB: the result comes from the large-block class; a second
// evaluation reuses the freed block and must overwrite it completely.
TEST(ElementwiseRegionTest, LargeResultsAreComplete) {
  const int64_t n = int64_t{2} << 20;
  const std::string t = "f32[" + std::to_string(n) + "]";
  const std::string hlo = OneOp(t + " x", t, "multiply(x, x)");
  for (float scale : {1.0f, -2.0f}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = scale * static_cast<float>(i % 1000);
    auto r = testing::Run(hlo, {Array(hlo::PrimitiveType::kF32, x)});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_EQ(r->data().size(), static_cast<size_t>(n * 4));
    for (int64_t i : {int64_t{0}, int64_t{1}, n / 2, n - 1}) {
      EXPECT_EQ(r->Get<float>(i), x[i] * x[i]) << i;
    }
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += r->Get<float>(i) != x[i] * x[i];
    EXPECT_EQ(wrong, 0);
  }
}

// A region of several parts (kElementwisePartChunks chunks each, with a
// ragged last chunk) and a splatted scalar: every element is right, and the
// result is the same with helpers and with every host core held.
TEST(ElementwiseRegionTest, RegionsInPartsOverHostCoresComputeEveryElement) {
  const int64_t n = 3 * kElementwisePartChunks * kElementwiseChunk + 77;
  const std::string t = "f32[" + std::to_string(n) + "]";
  const std::string hlo = "HloModule m\nENTRY e {\n  x = " + t + " parameter(0)\n" +
                          "  s = f32[] constant(0.5)\n  h = " + t + " broadcast(s), dimensions={}\n" +
                          "  a = " + t + " multiply(x, h)\n  ROOT r = " + t + " add(a, x)\n}\n";
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1013) - 500.0f;
  auto spread = testing::Run(hlo, {Array(hlo::PrimitiveType::kF32, x)});
  ASSERT_TRUE(spread.has_value()) << spread.error().message;
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += spread->Get<float>(i) != x[i] * 0.5f + x[i];
  EXPECT_EQ(wrong, 0);
  kiln::testing::AllHostCoresHeld held;
  auto alone = testing::Run(hlo, {Array(hlo::PrimitiveType::kF32, x)});
  ASSERT_TRUE(alone.has_value()) << alone.error().message;
  EXPECT_TRUE(*alone == *spread);
}

}  // namespace
}  // namespace kiln::runtime
