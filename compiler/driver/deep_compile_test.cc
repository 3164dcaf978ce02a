// The whole compiler (passes, fusion planning, kernel formation, tiling,
// buffer assignment, cost model, lowering) and the executor on hostile
// structure: computations nested to the parser's limit through every kind
// of call, call paths that multiply, and operand chains of hundreds of
// thousands of aliases, tuples and tokens. Every plan must compile, on a
// thread with a small stack, to an executable that computes what direct
// evaluation of the module computes.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/deep_modules_test_util.h"
#include "compiler/hlo/parser.h"
#include "compiler/driver/compile_module.h"
#include "runtime/eval/evaluator.h"
#include "runtime/program/loaded_program.h"

namespace kiln::driver {
namespace {

using hlo::testing::kCheckedStackBytes;
using hlo::testing::Nesting;
using hlo::testing::RunWithStack;

constexpr int64_t kLongChain = hlo::testing::kSanitized ? 30'000 : 100'000;
constexpr fusion::PlanKind kPlans[] = {fusion::PlanKind::kNone, fusion::PlanKind::kHeuristic,
                                       fusion::PlanKind::kGiven};

std::vector<hlo::Literal> Arguments(const hlo::Module& module) {
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : module.entry()->parameters()) {
    hlo::Literal arg = hlo::Literal::Uninitialized(p->shape());
    for (int64_t i = 0; i < p->shape().ElementCount(); ++i) arg.Set<float>(i, static_cast<float>(i % 7) - 3);
    args.push_back(std::move(arg));
  }
  return args;
}

// Compiles `text` with `plan`; when `run`, executes the executable and
// compares it with direct evaluation.
void ExpectCompiles(const std::string& text, fusion::PlanKind plan, bool run) {
  SCOPED_TRACE(std::string(fusion::PlanKindName(plan)));
  Result<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(text, "deep.hlo");
  ASSERT_TRUE(module) << module.error().message;
  const std::vector<hlo::Literal> args = Arguments(**module);
  Result<hlo::Literal> expected;
  if (run) {
    expected = runtime::EvaluateModule(**module, args);
    ASSERT_TRUE(expected) << expected.error().message;
  }
  CompileOptions options;
  options.plan = plan;
  Result<CompileOutput> compiled = CompileModule(**module, options);
  ASSERT_TRUE(compiled) << compiled.error().message;
  Result<std::unique_ptr<runtime::LoadedProgram>> loaded = runtime::LoadedProgram::FromBytes(compiled->executable);
  ASSERT_TRUE(loaded) << loaded.error().message;
  if (!run) return;
  Result<hlo::Literal> got = runtime::ExecuteProgram(**loaded, args);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->ToString(), expected->ToString());
}

TEST(DeepCompileTest, EveryKindOfNestingCompilesAndRunsUnderEveryPlan) {
  for (Nesting kind : hlo::testing::kAllNestings) {
    SCOPED_TRACE(hlo::testing::NestingName(kind));
    const std::string text = hlo::testing::NestedModule(kind, hlo::kMaxCallNesting);
    for (fusion::PlanKind plan : kPlans) {
      RunWithStack(kCheckedStackBytes, [&] { ExpectCompiles(text, plan, /*run=*/true); });
    }
  }
}

// c{k} calls c{k-1} ten times: 10^18 call paths. The cost model must not
// walk each one (running it would, so it is only compiled).
TEST(DeepCompileTest, CallPathsThatMultiplyCompile) {
  const std::string text = hlo::testing::FanOutCallModule(20, 10);
  for (fusion::PlanKind plan : kPlans) {
    RunWithStack(kCheckedStackBytes, [&] { ExpectCompiles(text, plan, /*run=*/false); });
  }
}

// Lowering resolves aliases, tuples and tokens that no kernel writes by
// following operands: chains of them must not recurse.
TEST(DeepCompileTest, LongChainsOfAliasesTuplesAndTokensCompileAndRun) {
  for (const std::string& text :
       {hlo::testing::OperandChainModule(kLongChain, "opt-barrier"), hlo::testing::AfterAllChainModule(kLongChain),
        hlo::testing::TupleElementChainModule(kLongChain)}) {
    SCOPED_TRACE(text.substr(0, text.find('\n')));
    for (fusion::PlanKind plan : kPlans) {
      RunWithStack(kCheckedStackBytes, [&] { ExpectCompiles(text, plan, /*run=*/true); });
    }
  }
}

TEST(DeepCompileTest, MillionLongChainFusesAndRuns) {
  const std::string text = hlo::testing::OperandChainModule(hlo::testing::kSanitized ? 200'000 : 1'000'000);
  RunWithStack(kCheckedStackBytes, [&] { ExpectCompiles(text, fusion::PlanKind::kHeuristic, /*run=*/true); });
}

}  // namespace
}  // namespace kiln::driver
