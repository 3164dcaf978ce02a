// The tuner's search strategy (private to kiln_autotune): alternating tile
// sweeps and simulated-annealing fusion moves over a TuningState, from a
// seeded generator of its own (the same seed gives the same sequence on
// every platform), until the budget is spent or nothing is left to try.
// tuner.h describes both kinds of step.
//
// One per Tune call; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "compiler/autotune/tuning_state.h"

namespace kiln::autotune::internal {

// splitmix64: small, seeded, identical everywhere.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

class SearchStrategy {
 public:
  using Clock = std::chrono::steady_clock;
  // `reserve`: trials kept back for the final check.
  SearchStrategy(TuningState& state, const TuneOptions& options, bool search_fusion, Clock::time_point start,
                 int64_t reserve, TuneResult& result)
      : state_(state), options_(options), search_fusion_(search_fusion), start_(start), reserve_(reserve),
        result_(result), random_(options.seed) {}

  // Searches from `start`; best() is then the fastest point known exactly.
  void Run(const Point& start);

  const std::optional<Point>& best() const { return best_; }
  double best_us() const { return best_us_; }

 private:
  bool BudgetLeft() const;
  double Progress() const;  // 0 .. 1 of the budget spent
  // One tile sweep of the current plan; false when no kernel has a tile
  // worth measuring (`explore`: any tile not yet measured is worth it).
  bool TileSweep(bool explore);
  // One fusion move; false when no proposal was measured.
  bool FusionMove();
  // Flip sets near current_'s, sampled by kernel weight: one or two single
  // flips, or a group move (Groups()).
  std::vector<int64_t> Propose(const Formed& formed);
  // Flippable edges grouped by producer (consumer edges and sibling edges
  // apart), groups of two or more; computed once.
  const std::vector<std::vector<int64_t>>& Groups();
  // Records `point` (formed with its tiles) as best if it is known exactly
  // and faster.
  void Consider(const Point& point, Formed formed);
  void MoveTo(const Point& point, double us);

  TuningState& state_;
  const TuneOptions& options_;
  const bool search_fusion_;
  const Clock::time_point start_;
  const int64_t reserve_;
  TuneResult& result_;
  SeededRandom random_;

  Point current_;
  double current_us_ = std::numeric_limits<double>::infinity();
  std::optional<Point> best_;
  double best_us_ = std::numeric_limits<double>::infinity();
  std::set<std::vector<int64_t>> tried_flips_;
  std::optional<std::vector<std::vector<int64_t>>> groups_;
};

}  // namespace kiln::autotune::internal
