#include "compiler/autotune/calibrated_model.h"

#include <cmath>

#include "compiler/fusion/tiling.h"

namespace kiln::autotune {
namespace {

// Measurements a class needs before its own mean outweighs the global one.
constexpr double kShrinkage = 2;

std::string_view SpaceName(runtime::SpaceKind space) {
  switch (space) {
    case runtime::SpaceKind::kUntiled:
      return "untiled";
    case runtime::SpaceKind::kLoop:
      return "loop";
    case runtime::SpaceKind::kReduce:
      return "reduce";
    case runtime::SpaceKind::kContraction:
      return "contraction";
  }
  return "?";
}

}  // namespace

std::string CalibratedModel::ClassOf(const hlo::Computation& computation, const fusion::Kernel& kernel) {
  fusion::TilingProblem problem = fusion::MakeTilingProblem(computation, kernel);
  return std::string(SpaceName(problem.space)) + (kernel.instructions.size() > 1 ? "/fused" : "/single");
}

double CalibratedModel::Factor(const std::string& kernel_class) const {
  double global = all_.count > 0 ? all_.log_ratio / static_cast<double>(all_.count) : 0;
  auto it = classes_.find(kernel_class);
  if (it == classes_.end()) return std::exp(global);
  const Sum& s = it->second;
  return std::exp((s.log_ratio + kShrinkage * global) / (static_cast<double>(s.count) + kShrinkage));
}

double CalibratedModel::Predict(const std::string& kernel_class, double analytic_us) const {
  return analytic_us * Factor(kernel_class);
}

void CalibratedModel::Learn(const std::string& kernel_class, double analytic_us, double measured_us) {
  if (!(analytic_us > 0) || !(measured_us > 0) || !std::isfinite(analytic_us) || !std::isfinite(measured_us)) return;
  double log_ratio = std::log(measured_us / analytic_us);
  Sum& s = classes_[kernel_class];
  s.log_ratio += log_ratio;
  ++s.count;
  all_.log_ratio += log_ratio;
  ++all_.count;
}

}  // namespace kiln::autotune
