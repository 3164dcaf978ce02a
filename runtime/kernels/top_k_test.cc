// topk and the "TopK" custom-call.
#include <gtest/gtest.h>

#include "runtime/eval/evaluator.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::LiteralOrDie;
using testing::ParseOrDie;
using testing::RunRoot;

TEST(TopKTest, LargestWithTiesTakesTheLowerIndex) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true
})",
                   {"f32[2,5] {{1, 5, 3, 5, 2}, {-0.0, 0, nan, -inf, -1}}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ToString(),
            "(f32[2,3] {{5, 5, 3}, {nan, 0, -0.0}}, s32[2,3] {{1, 3, 2}, {2, 1, 0}})");
}

TEST(TopKTest, Smallest) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = s32[4] parameter(0)
  ROOT t = (s32[2], s32[2]) topk(x), k=2, largest=false
})",
                   {"s32[4] {4, -2, 7, -2}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ToString(), "(s32[2] {-2, -2}, s32[2] {1, 3})");
}

TEST(TopKTest, RejectsKLargerThanTheRow) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=true
})",
                   {"f32[2] {1, 2}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not fit top-k"), std::string::npos) << r.error().message;
}

TEST(TopKTest, CustomCallWithGreaterThanComparator) {
  auto module = ParseOrDie(R"(
HloModule m
gt {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY e {
  x = bf16[2,4] parameter(0)
  ROOT t = (bf16[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", called_computations={gt}
})");
  ASSERT_NE(module, nullptr);
  std::vector<hlo::Literal> args = {LiteralOrDie("bf16[2,4] {{1, 4, 2, 3}, {0, -1, 8, 8}}")};
  auto r = EvaluateModule(*module, args);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ToString(), "(bf16[2,2] {{4, 3}, {8, 8}}, s32[2,2] {{1, 3}, {2, 3}})");
}

}  // namespace
}  // namespace kiln::runtime
