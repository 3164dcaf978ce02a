// Progress of a tuning run as it goes, for whoever shows it (the server's
// GET /v1/tune/{id}, `kiln tune`'s progress line).
//
// ProgressRunner wraps the Runner a tuning measures with and publishes what
// passes through it: the heuristic baseline (the first measurement that is
// not strict), every strict measurement as a trial (the tuner counts its
// trials at the same point: TuneResult::trials equals `trials` at the end),
// and the fastest one so far. The Progress is read from any thread; the
// runner is used on the tuning thread only. It owns neither.
#pragma once

#include <atomic>
#include <cstdint>

#include "compiler/autotune/runner.h"

namespace kiln::autotune {

struct Progress {
  std::atomic<int64_t> trials{0};
  std::atomic<double> heuristic_us{-1};  // < 0: not measured yet
  std::atomic<double> best_us{-1};       // fastest candidate measured so far; < 0: none
};

class ProgressRunner final : public Runner {
 public:
  ProgressRunner(Runner& inner, Progress& progress) : inner_(inner), progress_(progress) {}

  Result<Measurement> Measure(std::span<const uint8_t> executable, bool strict_tiling) override;
  Status SetReference(std::span<const uint8_t> executable, uint64_t seed) override {
    return inner_.SetReference(executable, seed);
  }
  Status CompareToReference(std::span<const uint8_t> executable) override {
    return inner_.CompareToReference(executable);
  }
  bool ChecksKernels() const override { return inner_.ChecksKernels(); }
  Result<KernelCheck> CompareChangedKernels(std::span<const uint8_t> reference,
                                            std::span<const uint8_t> candidate) override {
    return inner_.CompareChangedKernels(reference, candidate);
  }
  Result<KernelCheck> CompareModulePairs(const std::vector<ModulePair>& pairs) override {
    return inner_.CompareModulePairs(pairs);
  }

 private:
  Runner& inner_;
  Progress& progress_;
};

}  // namespace kiln::autotune
