// The tuner's search inside loop bodies (compiler/autotune/body_search.h)
// on the simulator and the evaluator: a scanned layer whose heuristic body
// leaves a profitable fusion undone is tuned faster, and the tuned program
// computes what the heuristic's does, checked whole or kernel by kernel.
#include <gtest/gtest.h>

#include <string_view>

#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/chip/chip_spec.h"
#include "server/service/tune_runner.h"
#include "tests/scanned_layer_module.h"

namespace kiln::service {
namespace {



// The simulator's runner, except that whole programs are never compared:
// as for a step too large to evaluate here, or a slice's program.
class KernelsOnlyRunner final : public autotune::Runner {
 public:
  explicit KernelsOnlyRunner(SimulatedRunner& inner) : inner_(inner) {}
  Result<autotune::Measurement> Measure(std::span<const uint8_t> executable, bool strict) override {
    return inner_.Measure(executable, strict);
  }
  Status SetReference(std::span<const uint8_t>, uint64_t) override {
    return ResourceExhaustedError("too large to evaluate whole (test)");
  }
  Status CompareToReference(std::span<const uint8_t>) override { return FailedPreconditionError("not compared"); }
  bool ChecksKernels() const override { return true; }
  Result<autotune::KernelCheck> CompareChangedKernels(std::span<const uint8_t> reference,
                                                      std::span<const uint8_t> candidate) override {
    return inner_.CompareChangedKernels(reference, candidate);
  }
  Result<autotune::KernelCheck> CompareModulePairs(const std::vector<autotune::ModulePair>& pairs) override {
    ++pair_checks;
    return inner_.CompareModulePairs(pairs);
  }
  int pair_checks = 0;

 private:
  SimulatedRunner& inner_;
};

Result<autotune::TuneResult> TuneScannedLayer(autotune::Runner& runner, int64_t trials) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                        hlo::ParseModule(kiln::testing::kScannedLayer, "scanned"));
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module));
  autotune::TuneOptions options;
  options.max_trials = trials;
  return autotune::Tune(*module, driver::CompileOptions{}, runner, nullptr, options);
}

TEST(BodyTuningTest, AScannedLayerIsTunedInItsBodyAndComputesTheSame) {
  SimulatedRunner runner(*runtime::FindChip("v5e"));
  Result<autotune::TuneResult> result = TuneScannedLayer(runner, 60);
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->body_computations, 1);  // the body; the condition has nothing to flip
  EXPECT_GT(result->body_moves_measured, 0);
  ASSERT_TRUE(result->accepted) << result->decision;
  EXPECT_EQ(result->verification, "whole program");
  EXPECT_LT(result->tuned_us, result->heuristic_us);
  ASSERT_FALSE(result->body_flips.empty()) << result->decision;
  EXPECT_NE(result->body_flips.front().find("(in %body)"), std::string::npos) << result->body_flips.front();
  EXPECT_FALSE(result->edits.body_flips.empty());
  EXPECT_GT(result->body_gain_us, 0);
  EXPECT_NEAR(result->tiling_gain_us + result->fusion_gain_us + result->body_gain_us,
              result->heuristic_us - result->tuned_us, 1e-6);
  // The same seed and trials give the same plan.
  SimulatedRunner again(*runtime::FindChip("v5e"));
  Result<autotune::TuneResult> second = TuneScannedLayer(again, 60);
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(second->edits, result->edits);
  EXPECT_EQ(second->tuned_us, result->tuned_us);
}

TEST(BodyTuningTest, WithoutAWholeProgramCheckEachChangedBodyKernelIsChecked) {
  SimulatedRunner simulated(*runtime::FindChip("v5e"));
  KernelsOnlyRunner runner(simulated);
  Result<autotune::TuneResult> result = TuneScannedLayer(runner, 60);
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_TRUE(result->accepted) << result->decision;
  EXPECT_EQ(result->verification, "kernel by kernel");
  EXPECT_FALSE(result->body_flips.empty());
  EXPECT_GT(result->verified_body_kernels, 0) << result->decision;
  EXPECT_NE(result->decision.find("changed body kernels"), std::string::npos) << result->decision;
}

}  // namespace
}  // namespace kiln::service
