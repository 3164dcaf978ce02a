// batch-norm-training, -inference and -grad against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/kernels/element_access.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::RunRoot;

void ExpectNear(const hlo::Literal& got, const std::vector<double>& want) {
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size())) << got.ToString();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(GetElementAs<double>(got, i), want[i], 1e-4) << i << ": " << got.ToString();
  }
}

// x = f32[2,2] with feature_index=1: feature 0 holds {1, 3}, feature 1 {2, 6}.
// Means {2, 4}, biased variances {1, 4}.
TEST(BatchNormTest, TrainingNormalisesWithBatchStatistics) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  ROOT bn = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, scale, offset), epsilon=0, feature_index=1
})",
                   {"f32[2,2] {{1, 2}, {3, 6}}", "f32[2] {1, 10}", "f32[2] {0, 5}"});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->tuple_elements().size(), 3u);
  ExpectNear(r->tuple_elements()[0], {-1, -5, 1, 15});
  ExpectNear(r->tuple_elements()[1], {2, 4});
  ExpectNear(r->tuple_elements()[2], {1, 4});
}

TEST(BatchNormTest, InferenceUsesTheGivenStatistics) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  mean = f32[2] parameter(3)
  var = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.5, feature_index=0
})",
                   {"f32[2,2] {{1, 3}, {5, 7}}", "f32[2] {2, 1}", "f32[2] {1, 0}", "f32[2] {2, 6}",
                    "f32[2] {3.5, 0.5}"});
  ASSERT_TRUE(r) << r.error().message;
  // Feature 0: (x - 2) / 2 * 2 + 1; feature 1: (x - 6) / 1 * 1.
  ExpectNear(*r, {0, 2, -1, 1});
}

TEST(BatchNormTest, GradMatchesTheClosedForm) {
  // One feature over 2 elements: x = {1, 3}, mean 2, var 1, eps 0, scale 2,
  // grad_output {1, 0}: c0 = 1, c1 = -1, N = 2.
  // grad_operand = 2 * (g - 0.5 - (x - 2) * -1 / 2) = {2*(1-0.5-0.5), 2*(0-0.5+0.5)} = {0, 0}
  // grad_scale = -1, grad_offset = 1.
  auto r = RunRoot(
      R"(
HloModule m
ENTRY e {
  x = f32[2,1] parameter(0)
  scale = f32[1] parameter(1)
  mean = f32[1] parameter(2)
  var = f32[1] parameter(3)
  g = f32[2,1] parameter(4)
  ROOT bn = (f32[2,1], f32[1], f32[1]) batch-norm-grad(x, scale, mean, var, g), epsilon=0, feature_index=1
})",
      {"f32[2,1] {{1}, {3}}", "f32[1] {2}", "f32[1] {2}", "f32[1] {1}", "f32[2,1] {{1}, {0}}"});
  ASSERT_TRUE(r) << r.error().message;
  ExpectNear(r->tuple_elements()[0], {0, 0});
  ExpectNear(r->tuple_elements()[1], {-1});
  ExpectNear(r->tuple_elements()[2], {1});
}

TEST(BatchNormTest, RejectsPerFeatureOperandsOfTheWrongSize) {
  // feature_index=0 on a rank-1 operand makes each element its own feature,
  // so the one-element scale, mean and variance do not fit.
  auto r = RunRoot(
      R"(
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  scale = f32[1] parameter(1)
  mean = f32[1] parameter(2)
  var = f32[1] parameter(3)
  g = f32[3] parameter(4)
  ROOT bn = (f32[3], f32[1], f32[1]) batch-norm-grad(x, scale, mean, var, g), epsilon=0.33333333, feature_index=0
})",
      {"f32[3] {0, 1, 5}", "f32[1] {1}", "f32[1] {2}", "f32[1] {4.6666667}", "f32[3] {1, 2, 3}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not match 3 features"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
