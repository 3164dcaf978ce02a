#include "compiler/driver/tuned_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "compiler/fusion/tiling.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::driver {
namespace {

using fusion::DecisionKind;
using fusion::PlanKind;
using passes::testing::ParseVerified;

// A loop chain into a dot with a bias and activation epilogue, summed: fused
// edges to un-fuse, and a reduction whose result is never fused into its
// consumer (legality).
constexpr std::string_view kTunedModule = R"(HloModule tuned
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256,512] parameter(0)
  w = f32[512,256] parameter(1)
  bias = f32[256] parameter(2)
  s = f32[256,512] sine(x)
  m = f32[256,512] multiply(s, x)
  d = f32[256,256] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[256,256] broadcast(bias), dimensions={1}
  o = f32[256,256] add(d, bb)
  r = f32[256,256] logistic(o)
  z = f32[] constant(0)
  sum = f32[256] reduce(r, z), dimensions={1}, to_apply=add
  ROOT out = f32[256] negate(sum)
})";

struct Fixture {
  std::unique_ptr<hlo::Module> module;
  PreparedModule prepared;
  CompiledPlan heuristic;
  CompileOutput heuristic_out;
};

Fixture Prepare() {
  Fixture f;
  f.module = ParseVerified(kTunedModule);
  EXPECT_NE(f.module, nullptr);
  CompileOptions options;
  auto prepared = PrepareModule(*f.module, options);
  EXPECT_TRUE(prepared) << prepared.error().message;
  f.prepared = *prepared;
  auto plan = PlanPrepared(f.prepared, options);
  EXPECT_TRUE(plan) << plan.error().message;
  f.heuristic = *plan;
  auto out = LowerWithPlan(f.prepared, options);
  EXPECT_TRUE(out) << out.error().message;
  f.heuristic_out = *out;
  return f;
}

int64_t FirstEdge(const fusion::FusionPlan& plan, DecisionKind kind, bool fused) {
  for (size_t e = 0; e < plan.edges.size(); ++e) {
    if (plan.edges[e].kind == kind && plan.edges[e].fused == fused && !plan.edges[e].is_sibling()) {
      return static_cast<int64_t>(e);
    }
  }
  return -1;
}

TEST(TunedPlanTest, NoEditsIsTheHeuristicProgramUnderTheSameKeyAsTuned) {
  Fixture f = Prepare();
  auto tuned = LowerTuned(f.prepared, CompileOptions{}, f.heuristic.plan, PlanEdits{});
  ASSERT_TRUE(tuned) << tuned.error().message;
  EXPECT_EQ(tuned->fingerprint.key, f.heuristic_out.fingerprint.key);
  EXPECT_EQ(tuned->program.plan, "tuned");
  EXPECT_EQ(f.heuristic_out.program.plan, "heuristic");
  ASSERT_EQ(tuned->program.kernels.size(), f.heuristic_out.program.kernels.size());
  for (size_t k = 0; k < tuned->program.kernels.size(); ++k) {
    EXPECT_EQ(tuned->program.kernels[k], f.heuristic_out.program.kernels[k]);
  }
  EXPECT_EQ(tuned->estimated_us, f.heuristic_out.estimated_us);
}

TEST(TunedPlanTest, LegalityRefusalsAreNeverFlipped) {
  Fixture f = Prepare();
  int64_t legality = FirstEdge(f.heuristic.plan, DecisionKind::kLegality, false);
  ASSERT_GE(legality, 0);
  PlanEdits edits;
  edits.flipped_edges = {legality};
  auto refused = PlanTuned(f.prepared, CompileOptions{}, f.heuristic.plan, edits);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("legality decision and may not be flipped"), std::string::npos)
      << refused.error().message;
  for (int64_t bad : {int64_t{-1}, static_cast<int64_t>(f.heuristic.plan.edges.size())}) {
    edits.flipped_edges = {bad};
    EXPECT_FALSE(PlanTuned(f.prepared, CompileOptions{}, f.heuristic.plan, edits));
  }
}

TEST(TunedPlanTest, UnfusingAProfitableEdgeGivesMoreKernelsUnderTheSameKey) {
  Fixture f = Prepare();
  int64_t fused = FirstEdge(f.heuristic.plan, DecisionKind::kProfitability, true);
  ASSERT_GE(fused, 0);
  PlanEdits edits;
  edits.flipped_edges = {fused};
  auto tuned = LowerTuned(f.prepared, CompileOptions{}, f.heuristic.plan, edits);
  ASSERT_TRUE(tuned) << tuned.error().message;
  EXPECT_EQ(tuned->kernels, f.heuristic_out.kernels + 1);
  EXPECT_EQ(tuned->fingerprint.key, f.heuristic_out.fingerprint.key);
  EXPECT_FALSE(tuned->fusion_edges[fused].fused);
  EXPECT_NE(tuned->fusion_edges[fused].reason.find("autotuner"), std::string::npos);
  edits.flipped_edges = {fused, fused};
  EXPECT_FALSE(PlanTuned(f.prepared, CompileOptions{}, f.heuristic.plan, edits));
}

TEST(TunedPlanTest, ATileOverrideIsTheTileTheExecutableCarries) {
  Fixture f = Prepare();
  fusion::TilingOptions tiling = TilingOptionsFor(CompileOptions{}, *f.heuristic.chip);
  const hlo::Computation& entry = *f.prepared.module->entry();
  bool overridden = false;
  for (const fusion::Kernel& kernel : f.heuristic.plan.kernels) {
    auto candidates = fusion::TileCandidates(fusion::MakeTilingProblem(entry, kernel), tiling);
    ASSERT_TRUE(candidates);
    if (candidates->size() < 2) continue;
    PlanEdits edits;
    edits.tiles[kernel.instructions] = candidates->back();
    auto tuned = LowerTuned(f.prepared, CompileOptions{}, f.heuristic.plan, edits);
    ASSERT_TRUE(tuned) << tuned.error().message;
    const std::string root(entry.instructions()[kernel.roots.front()]->name());
    auto it = std::find_if(tuned->program.kernels.begin(), tuned->program.kernels.end(),
                           [&](const runtime::ProgramKernel& k) { return k.name == root; });
    ASSERT_NE(it, tuned->program.kernels.end());
    EXPECT_EQ(it->tiling.grid, candidates->back().grid);
    EXPECT_NE(it->tiling.grid, kernel.tile.grid);
    overridden = true;

    // A tile that does not fit, or for a kernel the plan lacks, is refused.
    PlanEdits bad = edits;
    bad.tiles[kernel.instructions].vmem_bytes += 1;
    EXPECT_FALSE(PlanTuned(f.prepared, CompileOptions{}, f.heuristic.plan, bad));
    PlanEdits missing;
    missing.tiles[{0, 1, 2, 3, 4, 5, 6, 7}] = candidates->back();
    auto refused = PlanTuned(f.prepared, CompileOptions{}, f.heuristic.plan, missing);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("no such kernel"), std::string::npos) << refused.error().message;
  }
  EXPECT_TRUE(overridden);
}

}  // namespace
}  // namespace kiln::driver
