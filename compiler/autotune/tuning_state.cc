#include "compiler/autotune/tuning_state.h"

#include "base/clock.h"
#include "compiler/autotune/tile_record.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace kiln::autotune::internal {
namespace {

using Clock = std::chrono::steady_clock;

int TileOf(const Point& point, const fusion::Kernel& kernel) {
  auto it = point.tiles.find(kernel.instructions);
  return it == point.tiles.end() ? 0 : it->second;
}

}  // namespace

Result<Formed> TuningState::Form(const Point& point) {
  auto start = Clock::now();
  Result<std::vector<fusion::Kernel>> kernels = space_.FormKernels(point.flips);
  if (!kernels) {
    result_.ms.model += MsSince(start);
    return kernels.error();
  }
  Formed formed;
  formed.kernels = *std::move(kernels);
  for (const fusion::Kernel& kernel : formed.kernels) {
    const KernelChoices& choices = space_.Choices(kernel);
    int tile = TileOf(point, kernel);
    if (tile < 0 || tile >= static_cast<int>(choices.tiles.size())) tile = 0;
    formed.tile.push_back(tile);
  }
  result_.ms.model += MsSince(start);
  return formed;
}

std::optional<double> TuningState::MeasuredUs(const PairKey& key) const {
  auto it = measured_.find(key);
  if (it == measured_.end()) return std::nullopt;
  return it->second;
}

double TuningState::PredictPair(const fusion::Kernel& kernel, int tile) {
  PairKey key{kernel.instructions, tile};
  if (std::optional<double> us = MeasuredUs(key)) return *us;
  if (Invalid(key)) return std::numeric_limits<double>::infinity();
  const KernelChoices& choices = space_.Choices(kernel);
  return model_.Predict(choices.kernel_class, choices.analytic_us[tile]);
}

Prediction TuningState::Predict(const Formed& formed) {
  Prediction p;
  p.us = other_us_;
  p.exact = true;
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    PairKey key{formed.kernels[k].instructions, formed.tile[k]};
    if (std::optional<double> us = MeasuredUs(key)) {
      p.us += *us;
      continue;
    }
    p.exact = false;
    if (Invalid(key)) {
      p.us = std::numeric_limits<double>::infinity();
      continue;
    }
    const KernelChoices& choices = space_.Choices(formed.kernels[k]);
    p.us += model_.Predict(choices.kernel_class, choices.analytic_us[formed.tile[k]]);
  }
  return p;
}

void TuningState::ChooseBestTiles(Formed& formed) {
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    const fusion::Kernel& kernel = formed.kernels[k];
    const int n = static_cast<int>(space_.Choices(kernel).tiles.size());
    int chosen = -1;
    double chosen_us = std::numeric_limits<double>::infinity();
    bool any_measured = false;
    for (int t = 0; t < n; ++t) {
      if (std::optional<double> us = MeasuredUs({kernel.instructions, t})) {
        if (!any_measured || *us < chosen_us) chosen = t, chosen_us = *us;
        any_measured = true;
      }
    }
    if (!any_measured) {
      for (int t = 0; t < n; ++t) {
        double us = PredictPair(kernel, t);
        if (chosen < 0 || us < chosen_us) chosen = t, chosen_us = us;
      }
    }
    formed.tile[k] = std::max(chosen, 0);
  }
}

const std::string* TuningState::WorkloadKey(const fusion::Kernel& kernel) {
  auto [it, inserted] = workload_keys_.try_emplace(kernel.instructions);
  if (inserted) {
    Result<std::string> key = KernelWorkloadKey(*prepared_.module->entry(), kernel);
    if (key) it->second = *std::move(key);
  }
  return it->second.empty() ? nullptr : &it->second;
}

Point TuningState::Normalized(std::vector<int64_t> flips, const Formed& formed) {
  Point point;
  std::sort(flips.begin(), flips.end());
  point.flips = std::move(flips);
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    if (formed.tile[k] != 0) point.tiles[formed.kernels[k].instructions] = formed.tile[k];
  }
  return point;
}

driver::PlanEdits TuningState::Edits(const Point& point, const Formed& formed) {
  driver::PlanEdits edits;
  edits.flipped_edges = point.flips;
  edits.body_flips = prepared_.body_flips;
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    if (formed.tile[k] == 0) continue;
    edits.tiles[formed.kernels[k].instructions] = space_.Choices(formed.kernels[k]).tiles[formed.tile[k]];
  }
  return edits;
}

Result<driver::CompileOutput> TuningState::Lower(const Point& point, const Formed& formed) {
  return Lower(point, formed, prepared_.body_flips);
}

Result<driver::CompileOutput> TuningState::Lower(const Point& point, const Formed& formed,
                                                 const fusion::BodyFlips& bodies) {
  return Lower(point, formed, bodies, {});
}

Result<driver::CompileOutput> TuningState::Lower(const Point& point, const Formed& formed,
                                                 const fusion::BodyFlips& bodies,
                                                 const std::vector<std::vector<int64_t>>& kernel_order) {
  auto start = Clock::now();
  driver::PlanEdits edits = Edits(point, formed);
  edits.body_flips = bodies;
  edits.kernel_order = kernel_order;
  auto out = driver::LowerTuned(prepared_, options_, space_.base(), edits);
  result_.ms.compile += MsSince(start);
  return out;
}

Result<double> TuningState::Measure(const Point& point, const Formed& formed) {
  KILN_ASSIGN_OR_RETURN(driver::CompileOutput out, Lower(point, formed));
  ++result_.trials;  // a program measured (as the job's progress counts them)
  auto start = Clock::now();
  Result<Measurement> m = runner_.Measure(out.executable, /*strict_tiling=*/true);
  result_.ms.timing += MsSince(start);
  if (!m) return m.error();
  std::unordered_map<std::string, const KernelTime*> by_name;
  for (const KernelTime& k : m->kernels) by_name[k.name] = &k;
  double plan_us = 0;
  std::string first_error;
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    const fusion::Kernel& kernel = formed.kernels[k];
    const KernelChoices& choices = space_.Choices(kernel);
    PairKey key{kernel.instructions, formed.tile[k]};
    auto it = by_name.find(choices.root);
    if (it == by_name.end()) {
      return InternalError("the measurement has no kernel " + choices.root);
    }
    tried_.try_emplace(key, kernel);
    const KernelTime& time = *it->second;
    if (time.error) {
      invalid_[key] = *time.error;
      if (first_error.empty()) first_error = *time.error;
      continue;
    }
    plan_us += time.us;
    if (measured_.contains(key)) continue;
    // What the models said before learning from this measurement.
    double analytic = choices.analytic_us[formed.tile[k]];
    analytic_.push_back(analytic);
    calibrated_.push_back(model_.Predict(choices.kernel_class, analytic));
    measured_series_.push_back(time.us);
    model_.Learn(choices.kernel_class, analytic, time.us);
    measured_[key] = time.us;
  }
  if (!first_error.empty()) return FailedPreconditionError(first_error);
  other_us_ = std::max(0.0, m->kernel_us - plan_us);
  return m->kernel_us;
}

}  // namespace kiln::autotune::internal
