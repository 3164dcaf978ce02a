// The autotuner's cost model: the compiler's analytic estimate of each
// kernel (compiler/cost) times a calibration factor per kernel class,
// learnt from measurements. A class is the kernel's iteration space and
// whether it is fused ("contraction/fused", "loop/single", ...); a class
// factor is the geometric mean of measured/estimated over its kernels,
// shrunk towards the factor over all classes while it has few of them, so
// the model ranks better as records accumulate. Never used to time a
// program: only to choose what to measure.
//
// Not thread-safe; one per tuning loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::autotune {

class CalibratedModel {
 public:
  // The class of `kernel` of `computation`.
  static std::string ClassOf(const hlo::Computation& computation, const fusion::Kernel& kernel);

  // Predicted microseconds of a kernel of class `kernel_class` whose
  // analytic estimate is `analytic_us`.
  double Predict(const std::string& kernel_class, double analytic_us) const;

  // One measurement of a kernel of `kernel_class`. Ignored unless both
  // times are positive and finite.
  void Learn(const std::string& kernel_class, double analytic_us, double measured_us);

  // The current factor of a class (1 before anything is learnt).
  double Factor(const std::string& kernel_class) const;
  int64_t measurements() const { return all_.count; }

 private:
  struct Sum {
    double log_ratio = 0;
    int64_t count = 0;
  };
  std::map<std::string, Sum> classes_;
  Sum all_;
};

}  // namespace kiln::autotune
