// The evaluator on computations nested to the parser's limit through every
// kind of call (call, fusion, while body, conditional branch, reduce, sort
// and map callbacks into the kernels), on a thread with a small stack; and
// on operand chains a million long. Each must compute the right numbers.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/deep_modules_test_util.h"
#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using hlo::testing::kCheckedStackBytes;
using hlo::testing::Nesting;
using hlo::testing::NestingName;
using hlo::testing::RunWithStack;
using testing::Lit;

constexpr int64_t kLongChain = hlo::testing::kSanitized ? 200'000 : 1'000'000;

TEST(DeepEvaluationTest, EveryKindOfCallEvaluatesAtTheNestingLimit) {
  struct Case {
    Nesting kind;
    const char* expected;
  };
  // Every chain bottoms out in one negate (or add, or compare) of the input.
  for (const Case& c : {Case{Nesting::kCall, "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}"},
                        Case{Nesting::kFusion, "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}"},
                        Case{Nesting::kWhile, "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}"},
                        Case{Nesting::kConditional, "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}"},
                        Case{Nesting::kReduce, "f32[] -3"},
                        Case{Nesting::kSort, "f32[8] {-9, -6, -1, -1, 2, 3, 4, 5}"},
                        Case{Nesting::kMap, "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}"}}) {
    SCOPED_TRACE(NestingName(c.kind));
    const std::string text = hlo::testing::NestedModule(c.kind, hlo::kMaxCallNesting);
    std::vector<hlo::Literal> args;
    args.push_back(Lit("f32[8] {3, -1, 4, -1, 5, -9, 2, -6}"));
    RunWithStack(kCheckedStackBytes, [&] { EXPECT_EQ(testing::RunToText(text, args), c.expected); });
  }
}

TEST(DeepEvaluationTest, MillionLongOperandChainsEvaluate) {
  std::vector<hlo::Literal> args;
  args.push_back(Lit("f32[8] {3, -1, 4, -1, 5, -9, 2, -6}"));
  RunWithStack(kCheckedStackBytes, [&] {
    // An even number of negations gives the input back.
    EXPECT_EQ(testing::RunToText(hlo::testing::OperandChainModule(kLongChain, "negate"), args),
              "f32[8] {3, -1, 4, -1, 5, -9, 2, -6}");
    EXPECT_EQ(testing::RunToText(hlo::testing::TupleElementChainModule(kLongChain / 4), args),
              "f32[8] {-3, 1, -4, 1, -5, 9, -2, 6}");
    EXPECT_EQ(testing::RunToText(hlo::testing::AfterAllChainModule(kLongChain / 4)), "token[] ...");
  });
}

}  // namespace
}  // namespace kiln::runtime
