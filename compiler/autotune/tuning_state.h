// The tuning loop's memory (private to kiln_autotune): points of the
// search (edge flips plus a tile index per kernel), what each kernel/tile
// pair measured (or why it failed), predictions from those measurements
// and the calibrated model, and the builder + runner call that measures a
// point. A kernel's time depends only on the kernel and its tile, so
// measured pairs compose exactly into any plan that forms those kernels.
//
// One per Tune call; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/autotune/calibrated_model.h"
#include "compiler/autotune/runner.h"
#include "compiler/autotune/search_space.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/tuned_plan.h"

namespace kiln::autotune::internal {

// A plan: flipped edges (sorted) and, per kernel (its instructions), the
// index of its tile in KernelChoices::tiles; kernels not named take 0.
struct Point {
  std::vector<int64_t> flips;
  std::map<std::vector<int64_t>, int> tiles;
  bool operator==(const Point&) const = default;
};

// A point's kernels with the tile index each takes.
struct Formed {
  std::vector<fusion::Kernel> kernels;
  std::vector<int> tile;
};

struct Prediction {
  double us = 0;
  bool exact = false;  // every kernel/tile pair measured
};

using PairKey = std::pair<std::vector<int64_t>, int>;

class TuningState {
 public:
  TuningState(SearchSpace& space, const driver::PreparedModule& prepared, const driver::CompileOptions& options,
              Runner& runner, TuneResult& result)
      : space_(space), prepared_(prepared), options_(options), runner_(runner), result_(result) {}

  Result<Formed> Form(const Point& point);
  Prediction Predict(const Formed& formed);
  // Puts each kernel on its best tile: the fastest measured, or the best
  // predicted when none was measured.
  void ChooseBestTiles(Formed& formed);
  // Tile indices of the formed kernels, those other than 0 only.
  static Point Normalized(std::vector<int64_t> flips, const Formed& formed);
  driver::PlanEdits Edits(const Point& point, const Formed& formed);

  // Lowers and measures `point` with strict tiling (one trial): records
  // every kernel/tile pair it timed. The kernels' summed time (additive, as
  // predictions are: Measurement::kernel_us), or why the point is
  // invalid.
  Result<double> Measure(const Point& point, const Formed& formed);
  // Lowers `point` (no measurement), its bodies fused as the prepared
  // module's are, or with `bodies` instead.
  Result<driver::CompileOutput> Lower(const Point& point, const Formed& formed);
  Result<driver::CompileOutput> Lower(const Point& point, const Formed& formed, const fusion::BodyFlips& bodies);
  // ... and its entry's kernels in the valid order closest to `kernel_order`
  // (driver::PlanEdits::kernel_order).
  Result<driver::CompileOutput> Lower(const Point& point, const Formed& formed, const fusion::BodyFlips& bodies,
                                      const std::vector<std::vector<int64_t>>& kernel_order);
  const hlo::Computation& entry() const { return *prepared_.module->entry(); }
  const driver::CompileOptions& options() const { return options_; }

  bool Measured(const PairKey& key) const { return measured_.contains(key); }
  bool Invalid(const PairKey& key) const { return invalid_.contains(key); }
  std::optional<double> MeasuredUs(const PairKey& key) const;
  double PredictPair(const fusion::Kernel& kernel, int tile);
  // The kernel's workload key (tile_record.h), computed once; null when it
  // cannot be fingerprinted.
  const std::string* WorkloadKey(const fusion::Kernel& kernel);
  // Every kernel/tile pair measured or refused, with the kernel's roots.
  const std::map<PairKey, fusion::Kernel>& tried() const { return tried_; }
  const std::map<PairKey, double>& measured() const { return measured_; }
  const std::map<PairKey, std::string>& invalid() const { return invalid_; }
  const std::vector<double>& analytic_series() const { return analytic_; }
  const std::vector<double>& calibrated_series() const { return calibrated_; }
  const std::vector<double>& measured_series() const { return measured_series_; }
  SearchSpace& space() { return space_; }

 private:
  SearchSpace& space_;
  const driver::PreparedModule& prepared_;
  const driver::CompileOptions& options_;
  Runner& runner_;
  TuneResult& result_;
  CalibratedModel model_;
  std::map<PairKey, double> measured_;
  std::map<PairKey, std::string> invalid_;
  std::map<PairKey, fusion::Kernel> tried_;  // for records
  std::map<std::vector<int64_t>, std::string> workload_keys_;  // "" when none
  // Time of program kernels outside the plan (lowering's small extra
  // kernels), from the last good measurement.
  double other_us_ = 0;
  std::vector<double> analytic_, calibrated_, measured_series_;
};

}  // namespace kiln::autotune::internal
