#include "server/service/kernel_verification.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "compiler/driver/compile_module.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/format/program.h"

namespace kiln::service {
namespace {

// An elementwise chain feeding a dot and a reduction: the heuristic fuses
// what the `none` plan runs one instruction per kernel.
constexpr std::string_view kChain = R"(HloModule chain
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  w = f32[256,128] parameter(1)
  n = f32[64,256] negate(x)
  ex = f32[64,256] exponential(n)
  d = f32[64,128] dot(ex, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,128] tanh(d)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(t, z), dimensions={1}, to_apply=add
})";

// The unfused (`none`) and fused (heuristic) programs of one prepared
// module: the same instructions, cut into different kernels.
struct TwoPrograms {
  runtime::Program unfused;
  runtime::Program fused;
};

TwoPrograms Lower() {
  auto module = hlo::ParseModule(kChain, "chain");
  EXPECT_TRUE(module && hlo::VerifyModule(**module));
  driver::CompileOptions options;
  options.plan = fusion::PlanKind::kNone;
  Result<driver::PreparedModule> prepared = driver::PrepareModule(**module, options);
  EXPECT_TRUE(prepared) << prepared.error().ToString();
  Result<driver::CompileOutput> unfused = driver::LowerWithPlan(*prepared, options);
  options.plan = fusion::PlanKind::kHeuristic;
  Result<driver::CompileOutput> fused = driver::LowerWithPlan(*prepared, options);
  EXPECT_TRUE(unfused && fused);
  return {unfused->program, fused->program};
}

std::unique_ptr<runtime::LoadedProgram> Load(runtime::Program program) {
  Result<std::unique_ptr<runtime::LoadedProgram>> loaded = runtime::LoadedProgram::Load(std::move(program));
  EXPECT_TRUE(loaded) << loaded.error().ToString();
  return loaded ? *std::move(loaded) : nullptr;
}

TEST(KernelVerificationTest, FusedKernelsComputeWhatTheUnfusedOnesDo) {
  TwoPrograms programs = Lower();
  ASSERT_LT(programs.fused.kernels.size(), programs.unfused.kernels.size()) << "the heuristic fused nothing";
  auto reference = Load(programs.unfused);
  auto candidate = Load(programs.fused);
  Result<KernelVerification> checked = VerifyChangedKernels(*reference, *candidate, {});
  ASSERT_TRUE(checked) << checked.error().ToString();
  EXPECT_GE(checked->changed_kernels, 1);
  EXPECT_GE(checked->regions, 1);
  EXPECT_GE(checked->compared_values, 1);
  EXPECT_TRUE(checked->refused_instructions.empty()) << checked->refused_why;
  EXPECT_EQ(checked->kernels.size(), static_cast<size_t>(checked->changed_kernels));
}

TEST(KernelVerificationTest, IdenticalProgramsHaveNothingToCheck) {
  TwoPrograms programs = Lower();
  auto a = Load(programs.fused);
  auto b = Load(programs.fused);
  Result<KernelVerification> checked = VerifyChangedKernels(*a, *b, {});
  ASSERT_TRUE(checked) << checked.error().ToString();
  EXPECT_EQ(checked->changed_kernels, 0);
  EXPECT_EQ(checked->regions, 0);
}

TEST(KernelVerificationTest, AKernelThatComputesSomethingElseIsCaughtAndNamed) {
  TwoPrograms programs = Lower();
  // A lowering bug in the candidate: its fused kernel negates nothing.
  bool changed = false;
  for (runtime::ProgramKernel& kernel : programs.fused.kernels) {
    const size_t at = kernel.hlo.find(" negate(");
    if (at == std::string::npos) continue;
    kernel.hlo.replace(at, 8, " abs(");
    changed = true;
  }
  ASSERT_TRUE(changed) << "no fused kernel holds the negate";
  auto reference = Load(programs.unfused);
  auto candidate = Load(programs.fused);
  Result<KernelVerification> checked = VerifyChangedKernels(*reference, *candidate, {});
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(checked.error().message.find("differs from the heuristic's"), std::string::npos)
      << checked.error().message;
}

TEST(KernelVerificationTest, ARegionOverTheMemoryBudgetIsRefusedNotFailed) {
  TwoPrograms programs = Lower();
  auto reference = Load(programs.unfused);
  auto candidate = Load(programs.fused);
  KernelVerificationOptions options;
  options.memory_budget = 1024;  // bytes: less than any of its arrays
  Result<KernelVerification> checked = VerifyChangedKernels(*reference, *candidate, options);
  ASSERT_TRUE(checked) << checked.error().ToString();
  EXPECT_EQ(checked->regions, 0);
  EXPECT_FALSE(checked->refused_instructions.empty());
  EXPECT_NE(checked->refused_why.find("evaluation budget"), std::string::npos) << checked->refused_why;
  // The refused instructions are the entry's, by name.
  EXPECT_NE(std::find(checked->refused_instructions.begin(), checked->refused_instructions.end(), "ex"),
            checked->refused_instructions.end());
}

TEST(KernelVerificationTest, TheHookRunsBeforeEachKernelEvaluated) {
  TwoPrograms programs = Lower();
  auto reference = Load(programs.unfused);
  auto candidate = Load(programs.fused);
  KernelVerificationOptions options;
  int calls = 0;
  options.before_kernel = [&calls] {
    ++calls;
    return Ok();
  };
  ASSERT_TRUE(VerifyChangedKernels(*reference, *candidate, options));
  EXPECT_GE(calls, 2);
}

// Body kernels checked alone (autotune/body_check.h): a fusion's
// computation against its instructions, as two modules.
constexpr std::string_view kInstructions = R"(HloModule check
ENTRY reference {
  param_0 = f32[64,256] parameter(0)
  n = f32[64,256] negate(param_0)
  ROOT e = f32[64,256] exponential(n)
})";
constexpr std::string_view kOtherKernel = R"(HloModule check
ENTRY candidate {
  param_0 = f32[64,256] parameter(0)
  n = f32[64,256] abs(param_0)
  ROOT e = f32[64,256] exponential(n)
})";

std::unique_ptr<hlo::Module> Parsed(std::string_view text) {
  auto module = hlo::ParseModule(text, "check");
  EXPECT_TRUE(module.has_value());
  return module ? *std::move(module) : nullptr;
}

TEST(KernelVerificationTest, AModulePairIsComparedOnTheSameRandomInputs) {
  auto reference = Parsed(kInstructions), same = Parsed(kInstructions), other = Parsed(kOtherKernel);
  ASSERT_TRUE(reference && same && other);
  KernelVerificationOptions options;
  Result<KernelVerification> ok = VerifyModulePairs({{"fusion.e", reference.get(), same.get(), {"n", "e"}}}, options);
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->regions, 1);
  EXPECT_TRUE(ok->refused_instructions.empty());
  Result<KernelVerification> differs =
      VerifyModulePairs({{"fusion.e", reference.get(), other.get(), {"n", "e"}}}, options);
  ASSERT_FALSE(differs);
  EXPECT_EQ(differs.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(differs.error().ToString().find("fusion.e"), std::string::npos) << differs.error().ToString();
  options.memory_budget = 1024;
  Result<KernelVerification> refused =
      VerifyModulePairs({{"fusion.e", reference.get(), other.get(), {"n", "e"}}}, options);
  ASSERT_TRUE(refused) << refused.error().ToString();
  EXPECT_EQ(refused->regions, 0);
  EXPECT_EQ(refused->refused_instructions, (std::vector<std::string>{"n", "e"}));
  EXPECT_NE(refused->refused_why.find("budget"), std::string::npos) << refused->refused_why;
}

}  // namespace
}  // namespace kiln::service
