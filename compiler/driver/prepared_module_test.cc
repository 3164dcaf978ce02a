#include "compiler/driver/prepared_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "compiler/driver/compile_module.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::driver {
namespace {

using fusion::PlanKind;
using passes::testing::ParseVerified;

// An elementwise chain with a reduction and a dot: the heuristic fuses
// what `none` keeps apart, so the two plans give different programs.
constexpr std::string_view kModule = R"(HloModule prepared
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256,512] parameter(0)
  w = f32[512,128] parameter(1)
  n = f32[256,512] negate(x)
  ex = f32[256,512] exponential(n)
  d = f32[256,128] dot(ex, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[256,128] tanh(d)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(t, z), dimensions={1}, to_apply=add
})";

CompileOptions Options(PlanKind plan, std::string chip = "v5e") {
  CompileOptions options;
  options.plan = plan;
  options.chip = std::move(chip);
  return options;
}

// The executable with its compile time (wall time, differs between runs)
// zeroed, so two compiles of the same plan compare byte for byte.
std::vector<uint8_t> WithoutCompileTime(const CompileOutput& out) {
  runtime::Program program = out.program;
  program.compile_ms = 0;
  return *runtime::SerializeProgram(program);
}

void ExpectSameCompile(const CompileOutput& lowered, const CompileOutput& one_shot) {
  EXPECT_EQ(lowered.fingerprint.key, one_shot.fingerprint.key);
  EXPECT_EQ(lowered.kernels, one_shot.kernels);
  EXPECT_EQ(lowered.fused_instructions, one_shot.fused_instructions);
  EXPECT_EQ(lowered.peak_hbm_bytes, one_shot.peak_hbm_bytes);
  EXPECT_EQ(lowered.cost_model_us, one_shot.cost_model_us);
  EXPECT_EQ(WithoutCompileTime(lowered), WithoutCompileTime(one_shot));
}

TEST(PreparedModuleTest, OnePreparationLowersEachPlanAsTheOneShotCompileDoes) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kModule);
  Result<PreparedModule> prepared = PrepareModule(*module, Options(PlanKind::kHeuristic));
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_TRUE(prepared->passes_ran);
  EXPECT_TRUE(prepared->fusions_inlined);

  std::vector<int64_t> kernels;
  for (CompileOptions options : {Options(PlanKind::kNone), Options(PlanKind::kHeuristic),
                                 Options(PlanKind::kHeuristic, "V6E")}) {
    SCOPED_TRACE(std::string(fusion::PlanKindName(options.plan)) + " on " + options.chip);
    Result<CompileOutput> lowered = LowerWithPlan(*prepared, options);
    ASSERT_TRUE(lowered) << lowered.error().message;
    std::unique_ptr<hlo::Module> fresh = ParseVerified(kModule);
    // (The one-shot compile goes on to time its executable: device_estimate_test.cc.)
    Result<CompileOutput> one_shot = CompileModule(*fresh, options);
    ASSERT_TRUE(one_shot) << one_shot.error().message;
    ExpectSameCompile(*lowered, *one_shot);
    kernels.push_back(lowered->kernels);
  }
  // The plans really differ: `none` runs more kernels than the heuristic.
  EXPECT_GT(kernels[0], kernels[1]);
}

TEST(PreparedModuleTest, LoweringTwiceGivesTheSameProgram) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kModule);
  Result<PreparedModule> prepared = PrepareModule(*module, Options(PlanKind::kNone));
  ASSERT_TRUE(prepared) << prepared.error().message;
  Result<CompileOutput> first = LowerWithPlan(*prepared, Options(PlanKind::kHeuristic));
  Result<CompileOutput> second = LowerWithPlan(*prepared, Options(PlanKind::kHeuristic));
  ASSERT_TRUE(first && second);
  ExpectSameCompile(*first, *second);
}

TEST(PreparedModuleTest, GivenPlanNeedsAModulePreparedWithItsFusionsKept) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kModule);
  Result<PreparedModule> prepared = PrepareModule(*module, Options(PlanKind::kHeuristic));
  ASSERT_TRUE(prepared) << prepared.error().message;
  Result<CompileOutput> given = LowerWithPlan(*prepared, Options(PlanKind::kGiven));
  ASSERT_FALSE(given);
  EXPECT_EQ(given.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(given.error().message.find("prepare it again"), std::string::npos) << given.error().message;
}

// A loop whose body is an elementwise chain: the heuristic's preparation
// fuses the body, `none`'s keeps it, and neither serves the other plan.
TEST(PreparedModuleTest, LoopBodiesAreFusedForTheHeuristicOnly) {
  constexpr std::string_view kLoop = R"(HloModule loop
cond {
  p = (s32[], f32[256,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[256,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[256,512] get-tuple-element(p), index=1
  a = f32[256,512] negate(x)
  b = f32[256,512] exponential(a)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[256,512]) tuple(i1, b)
}
ENTRY e {
  x = f32[256,512] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[256,512]) tuple(zero, x)
  w = (s32[], f32[256,512]) while(init), condition=cond, body=body
  ROOT out = f32[256,512] get-tuple-element(w), index=1
})";
  std::unique_ptr<hlo::Module> fused_module = ParseVerified(kLoop);
  Result<PreparedModule> fused = PrepareModule(*fused_module, Options(PlanKind::kHeuristic));
  ASSERT_TRUE(fused) << fused.error().message;
  EXPECT_TRUE(fused->has_control_flow_bodies);
  EXPECT_TRUE(fused->bodies_fused);
  EXPECT_NE(std::find(fused->changed_passes.begin(), fused->changed_passes.end(), "fuse-bodies"),
            fused->changed_passes.end());
  EXPECT_TRUE(LowerWithPlan(*fused, Options(PlanKind::kHeuristic)).has_value());
  Result<CompileOutput> none_from_fused = LowerWithPlan(*fused, Options(PlanKind::kNone));
  ASSERT_FALSE(none_from_fused);
  EXPECT_EQ(none_from_fused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(none_from_fused.error().message.find("loop bodies"), std::string::npos) << none_from_fused.error().message;

  std::unique_ptr<hlo::Module> plain_module = ParseVerified(kLoop);
  Result<PreparedModule> plain = PrepareModule(*plain_module, Options(PlanKind::kNone));
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_TRUE(plain->has_control_flow_bodies);
  EXPECT_FALSE(plain->bodies_fused);
  EXPECT_TRUE(LowerWithPlan(*plain, Options(PlanKind::kNone)).has_value());
  EXPECT_FALSE(LowerWithPlan(*plain, Options(PlanKind::kHeuristic)).has_value());
}

TEST(PreparedModuleTest, PassesAloneCannotBeLowered) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kModule);
  Result<PreparedModule> prepared = PreparePasses(*module, Options(PlanKind::kHeuristic));
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_FALSE(prepared->source_fingerprint);
  Result<CompileOutput> lowered = LowerWithPlan(*prepared, Options(PlanKind::kHeuristic));
  ASSERT_FALSE(lowered);
  EXPECT_EQ(lowered.error().code, ErrorCode::kFailedPrecondition);
}

TEST(PreparedModuleTest, UnknownChipFailsBeforeThePasses) {
  std::unique_ptr<hlo::Module> module = ParseVerified(kModule);
  Result<PreparedModule> prepared = PrepareModule(*module, Options(PlanKind::kHeuristic, "v9"));
  ASSERT_FALSE(prepared);
  EXPECT_NE(prepared.error().message.find("unknown chip 'v9'"), std::string::npos) << prepared.error().message;
}

}  // namespace
}  // namespace kiln::driver
