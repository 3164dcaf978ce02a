// Every valid corpus module goes through the passes (verifier after each)
// and gets plans under `none` and `heuristic`, and `given` where it has
// fusion instructions, each re-validated from its edges and with a buffer
// assignment and cost. The corpus is walked in kShards interleaved shards,
// one ctest entry each, so the walk spreads over ctest's jobs (and the
// sanitizer run can take some of them; scripts/sanitize_tests.sh). Which
// modules are invalid is the verifier corpus test's to check.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "compiler/driver/plan_module.h"
#include "compiler/fusion/kernel_formation.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/test_corpus.h"
#include "compiler/hlo/verifier.h"

namespace kiln::driver {
namespace {

using fusion::PlanKind;
using fusion::PlanKindName;
using fusion::TilingOptions;
using hlo::testing::CorpusModules;
using hlo::testing::CorpusRoot;
using hlo::testing::ReadTextFile;

using hlo::testing::kKnownInvalidModules;
using hlo::testing::kMinCorpusModules;

// Modules that plan but cannot fit the HBM of any chip, by path under
// <corpus>/hlo: buffer assignment must reject them with its reason.
bool ExceedsHbm(const std::string& rel) {
  // PyTorch/XLA Llama 2 step with 132 bf16[32768,4096,4096] values (1 TiB
  // each) and no sharding annotations.
  return rel == "torchxla-dumps/GraphHelper__llama2__llama2_dp_1_tp_1_pp_1.hlo";
}

bool HasFusion(const hlo::Module& module) {
  for (const auto& instr : module.entry()->instructions()) {
    if (instr->opcode() == hlo::Opcode::kFusion) return true;
  }
  return false;
}

// Module i belongs to shard i % kShards.
constexpr int kShards = 4;

class CorpusPlanTest : public ::testing::TestWithParam<int> {};

TEST_P(CorpusPlanTest, EveryValidModulePlansUnderEveryPlanKind) {
  const auto& files = CorpusModules();
  ASSERT_GE(files.size(), kMinCorpusModules);
  int invalid = 0, planned = 0, given = 0, with_fusion = 0, too_big = 0, expected_too_big = 0;
  for (size_t i = static_cast<size_t>(GetParam()); i < files.size(); i += kShards) {
    const auto& path = files[i];
    std::string rel = path.lexically_relative(CorpusRoot() / "hlo").string();
    std::string text = ReadTextFile(path);
    auto parsed = hlo::ParseModule(text, rel);
    ASSERT_TRUE(parsed.has_value()) << rel << ": " << parsed.error().message;
    if (!hlo::VerifyModule(**parsed)) {
      ++invalid;
      continue;
    }
    bool has_fusion = HasFusion(**parsed);
    if (has_fusion) ++with_fusion;
    if (ExceedsHbm(rel)) expected_too_big += 2;  // none and heuristic; it has no fusions
    for (PlanKind kind : {PlanKind::kNone, PlanKind::kHeuristic, PlanKind::kGiven}) {
      if (kind == PlanKind::kGiven && !has_fusion) continue;
      auto module = hlo::ParseModule(text, rel);
      ASSERT_TRUE(module.has_value());
      CompileOptions options;
      options.plan = kind;
      options.verify_passes = true;
      options.chip = "v5p";  // the largest HBM: the corpus holds 405B-parameter steps
      auto compiled = PlanModule(**module, options);
      if (!compiled && ExceedsHbm(rel)) {
        EXPECT_NE(compiled.error().message.find("buffer assignment: program needs"),
                  std::string::npos)
            << compiled.error().message;
        ++too_big;
        continue;
      }
      if (!compiled) {
        ADD_FAILURE() << rel << " plan " << PlanKindName(kind) << ": " << compiled.error().message;
        continue;
      }
      TilingOptions tiling;
      tiling.scoped_vmem_bytes = compiled->plan.scoped_vmem_bytes;
      tiling.mxu_size = compiled->chip->mxu_size;
      Status valid = ValidatePlan(*(*module)->entry(), tiling, compiled->plan);
      ASSERT_TRUE(valid.has_value())
          << rel << " plan " << PlanKindName(kind) << ": " << valid.error().message;
      EXPECT_GE(compiled->estimated_us, 0.0) << rel;
      if (kind == PlanKind::kGiven) ++given;
    }
    ++planned;
  }
  EXPECT_LE(invalid, kKnownInvalidModules);
  EXPECT_EQ(given, with_fusion);  // every module with fusions planned as given
  EXPECT_EQ(too_big, expected_too_big);
  std::cout << planned << " modules planned, " << given << " with given plans, " << invalid
            << " known-invalid skipped\n";
}

INSTANTIATE_TEST_SUITE_P(Shards, CorpusPlanTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace kiln::driver
