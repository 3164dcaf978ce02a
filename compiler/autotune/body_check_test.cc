#include "compiler/autotune/body_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

#include "compiler/driver/compile_options.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/passes/pass_test_util.h"
#include "tests/scanned_layer_module.h"

namespace kiln::autotune::internal {
namespace {

using passes::testing::ParseVerified;



struct Variants {
  std::unique_ptr<hlo::Module> module;
  driver::PreparedModule heuristic;
  std::vector<driver::PreparedModule> flipped;  // one per profitability decision of the body
};

Variants PrepareVariants() {
  Variants v;
  v.module = ParseVerified(kiln::testing::kScannedLayer);
  EXPECT_NE(v.module, nullptr);
  if (v.module == nullptr) return v;
  driver::CompileOptions options;
  Result<driver::PreparedModule> prepared = driver::PrepareModuleForTuning(*v.module, options);
  EXPECT_TRUE(prepared) << prepared.error().ToString();
  if (!prepared) return v;
  v.heuristic = *std::move(prepared);
  EXPECT_NE(v.heuristic.unfused_bodies_text, nullptr);
  for (const fusion::BodyDecisions& body : v.heuristic.body_decisions) {
    if (body.computation != "body") continue;
    for (size_t e = 0; e < body.decisions.size(); ++e) {
      if (body.decisions[e].kind != fusion::DecisionKind::kProfitability) continue;
      Result<driver::PreparedModule> flipped =
          driver::WithBodyFlips(v.heuristic, options, {{"body", {static_cast<int64_t>(e)}}});
      if (flipped) v.flipped.push_back(*std::move(flipped));  // some flips cannot be formed
    }
  }
  return v;
}

TEST(BodyCheckTest, EachChangedBodyKernelIsPairedWithItsInstructions) {
  Variants v = PrepareVariants();
  ASSERT_FALSE(v.flipped.empty());
  int64_t pairs = 0;
  for (const driver::PreparedModule& variant : v.flipped) {
    // The entry is the same instruction for instruction.
    EXPECT_EQ(variant.module->entry()->instructions().size(), v.heuristic.module->entry()->instructions().size());
    Result<std::vector<ModulePair>> changed = ChangedBodyKernels(v.heuristic, variant);
    ASSERT_TRUE(changed) << changed.error().ToString();
    for (const ModulePair& pair : *changed) {
      ++pairs;
      EXPECT_EQ(pair.computation, "body");
      EXPECT_GE(pair.instructions.size(), 2u);
      // The outliner clones exactly the kernel's instructions.
      EXPECT_EQ(pair.reference_hlo, pair.candidate_hlo) << pair.name;
    }
  }
  EXPECT_GT(pairs, 0);
  // The heuristic's own bodies have nothing to check.
  Result<std::vector<ModulePair>> none = ChangedBodyKernels(v.heuristic, v.heuristic);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(BodyCheckTest, AFusionReadingTheWrongValuesIsCaught) {
  Variants v = PrepareVariants();
  bool corrupted = false;
  for (driver::PreparedModule& variant : v.flipped) {
    // Record a changed kernel's inputs in another order than its fusion
    // reads them: what a miswired outlining would do.
    for (fusion::BodyDecisions& body : variant.body_decisions) {
      for (fusion::BodyKernel& kernel : body.kernels) {
        if (corrupted || kernel.instructions.size() < 2 || kernel.inputs.size() < 2) continue;
        bool heuristic_forms_it = false;
        for (const fusion::BodyDecisions& h : v.heuristic.body_decisions) {
          for (const fusion::BodyKernel& k : h.kernels) heuristic_forms_it |= k.instructions == kernel.instructions;
        }
        if (heuristic_forms_it) continue;
        std::reverse(kernel.inputs.begin(), kernel.inputs.end());
        corrupted = true;
      }
    }
    if (!corrupted) continue;
    Result<std::vector<ModulePair>> changed = ChangedBodyKernels(v.heuristic, variant);
    ASSERT_FALSE(changed);
    EXPECT_EQ(changed.error().code, ErrorCode::kFailedPrecondition);
    EXPECT_NE(changed.error().ToString().find("where its instructions read"), std::string::npos)
        << changed.error().ToString();
    break;
  }
  EXPECT_TRUE(corrupted) << "no changed kernel with two inputs to miswire";
}

}  // namespace
}  // namespace kiln::autotune::internal
