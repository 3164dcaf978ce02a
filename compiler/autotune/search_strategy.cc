#include "compiler/autotune/search_strategy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace kiln::autotune::internal {
namespace {

// Proposals the model ranks per fusion move; only the best is measured.
constexpr int kProposals = 12;
// A fusion proposal is measured when predicted within this share above the
// current plan at the start (annealing temperature), falling to 0.
constexpr double kStartTemperature = 0.03;
// A kernel measures another tile while it has fewer than this many, or
// while the model predicts one within kPromise of its best so far.
constexpr int kExploreTiles = 2;
constexpr double kPromise = 1.1;
// Rounds in a row without a measurement before the search stops.
constexpr int kMaxIdleRounds = 16;
// Share of fusion proposals that move a producer's edges together.
constexpr double kGroupMoveShare = 0.4;

}  // namespace

uint64_t SeededRandom::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool SearchStrategy::BudgetLeft() const {
  if (options_.cancelled && options_.cancelled()) return false;
  if (options_.max_trials > 0 && result_.trials + reserve_ >= options_.max_trials) return false;
  if (options_.max_seconds > 0 &&
      std::chrono::duration<double>(Clock::now() - start_).count() >= options_.max_seconds) {
    return false;
  }
  return true;
}

double SearchStrategy::Progress() const {
  double progress = 0;
  if (options_.max_trials > 0) {
    progress = static_cast<double>(result_.trials) / static_cast<double>(options_.max_trials);
  }
  if (options_.max_seconds > 0) {
    double spent = std::chrono::duration<double>(Clock::now() - start_).count() / options_.max_seconds;
    // With both budgets the temperature follows trials alone, so that the
    // same seed and trials give the same search on a slower machine.
    if (options_.max_trials == 0) progress = spent;
  }
  return std::clamp(progress, 0.0, 1.0);
}

void SearchStrategy::Consider(const Point& point, Formed formed) {
  Prediction p = state_.Predict(formed);
  if (p.exact && p.us < best_us_) {
    best_us_ = p.us;
    best_ = point;
  }
  state_.ChooseBestTiles(formed);
  Prediction composed = state_.Predict(formed);
  if (composed.exact && composed.us < best_us_) {
    best_us_ = composed.us;
    best_ = TuningState::Normalized(point.flips, formed);
  }
}

void SearchStrategy::MoveTo(const Point& point, double us) {
  current_ = point;
  current_us_ = us;
}

void SearchStrategy::Run(const Point& start) {
  current_ = start;
  tried_flips_.insert(start.flips);
  if (BudgetLeft()) {
    if (Result<Formed> formed = state_.Form(start)) {
      Result<double> us = state_.Measure(start, *formed);
      if (!us) ++result_.invalid_candidates;
      Consider(start, *formed);
      Formed best = *formed;
      state_.ChooseBestTiles(best);
      current_us_ = state_.Predict(best).us;
    }
  }
  int idle = 0;
  for (int64_t round = 0; BudgetLeft() && idle < kMaxIdleRounds; ++round) {
    // Promising tiles and fusion moves take turns; when the model sees
    // nothing promising, the budget goes to tiles not yet measured.
    bool tiles_first = !search_fusion_ || round % 2 == 0;
    bool measured = tiles_first ? TileSweep(false) : FusionMove();
    if (!measured && BudgetLeft()) measured = tiles_first ? (search_fusion_ && FusionMove()) : TileSweep(false);
    if (!measured && BudgetLeft()) measured = TileSweep(true);
    idle = measured ? 0 : idle + 1;
  }
}

bool SearchStrategy::TileSweep(bool explore) {
  Result<Formed> formed = state_.Form(current_);
  if (!formed) return false;
  state_.ChooseBestTiles(*formed);
  Formed sweep = *formed;
  bool any = false;
  for (size_t k = 0; k < formed->kernels.size(); ++k) {
    const fusion::Kernel& kernel = formed->kernels[k];
    const int n = static_cast<int>(state_.space().Choices(kernel).tiles.size());
    if (n < 2) continue;
    int measured = 0, next = -1;
    double best = std::numeric_limits<double>::infinity(), next_us = best;
    for (int t = 0; t < n; ++t) {
      PairKey key{kernel.instructions, t};
      if (std::optional<double> us = state_.MeasuredUs(key)) {
        ++measured;
        best = std::min(best, *us);
      } else if (!state_.Invalid(key)) {
        double us = state_.PredictPair(kernel, t);
        if (next < 0 || us < next_us) next = t, next_us = us;
      }
    }
    if (next < 0) continue;
    if (!explore && measured >= kExploreTiles && !(next_us < best * kPromise)) continue;
    sweep.tile[k] = next;
    any = true;
  }
  if (!any) return false;
  Point point = TuningState::Normalized(current_.flips, sweep);
  Result<double> us = state_.Measure(point, sweep);
  if (!us) ++result_.invalid_candidates;
  Consider(point, sweep);
  // The current plan keeps its fusion and takes the best tiles now known.
  Formed best = *formed;
  state_.ChooseBestTiles(best);
  MoveTo(TuningState::Normalized(current_.flips, best), state_.Predict(best).us);
  return true;
}

std::vector<int64_t> SearchStrategy::Propose(const Formed& formed) {
  const hlo::Computation& entry = state_.space().entry();
  const fusion::FusionPlan& base = state_.space().base();
  const std::vector<int64_t>& flippable = state_.space().flippable();
  // Weight of an edge: the time of the kernels its ends are in, so moves
  // go where the time is.
  std::vector<double> kernel_us(entry.instruction_count(), 0);
  double total = 0;
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    double us = state_.PredictPair(formed.kernels[k], formed.tile[k]);
    if (!std::isfinite(us)) us = 0;
    total += us;
    for (int64_t i : formed.kernels[k].instructions) kernel_us[i] = std::max(kernel_us[i], us);
  }
  const double floor = total / static_cast<double>(std::max<size_t>(formed.kernels.size(), 1)) * 0.05 + 1e-9;
  std::vector<double> cumulative;
  cumulative.reserve(flippable.size());
  double sum = 0;
  for (int64_t e : flippable) {
    const fusion::FusionEdge& edge = base.edges[e];
    double w = floor + kernel_us[edge.producer] + kernel_us[edge.consumer];
    if (edge.is_sibling()) w += kernel_us[edge.sibling];
    sum += w;
    cumulative.push_back(sum);
  }
  std::vector<int64_t> flips = current_.flips;
  if (random_.Uniform() < kGroupMoveShare) {
    // A group move: every flippable edge of one producer (its consumers, or
    // its consumers' sibling fusions) set to fused, or back to the
    // heuristic's decisions when they all are. Single flips cannot remove a
    // producer's kernel that several consumers refused to absorb: it stays
    // until the last of them absorbs it, so no single flip gains.
    const std::vector<std::vector<int64_t>>& groups = Groups();
    std::vector<double> group_cumulative;
    double group_sum = 0;
    for (const std::vector<int64_t>& group : groups) {
      const fusion::FusionEdge& first = base.edges[group.front()];
      group_sum += floor + kernel_us[first.producer] + kernel_us[first.consumer];
      group_cumulative.push_back(group_sum);
    }
    if (!groups.empty()) {
      double at = random_.Uniform() * group_sum;
      size_t pick = std::upper_bound(group_cumulative.begin(), group_cumulative.end(), at) - group_cumulative.begin();
      const std::vector<int64_t>& group = groups[std::min(pick, groups.size() - 1)];
      auto fused_now = [&](int64_t e) {
        bool flipped = std::binary_search(current_.flips.begin(), current_.flips.end(), e);
        return base.edges[e].fused != flipped;
      };
      const bool all_fused = std::all_of(group.begin(), group.end(), fused_now);
      for (int64_t e : group) {
        auto it = std::find(flips.begin(), flips.end(), e);
        const bool want_flipped = all_fused ? false : !base.edges[e].fused;
        if (want_flipped && it == flips.end()) flips.push_back(e);
        if (!want_flipped && it != flips.end()) flips.erase(it);
      }
      std::sort(flips.begin(), flips.end());
      return flips;
    }
  }
  int count = random_.Uniform() < 0.7 ? 1 : 2;
  for (int i = 0; i < count; ++i) {
    double at = random_.Uniform() * sum;
    size_t pick = std::upper_bound(cumulative.begin(), cumulative.end(), at) - cumulative.begin();
    pick = std::min(pick, flippable.size() - 1);
    int64_t e = flippable[pick];
    auto it = std::find(flips.begin(), flips.end(), e);
    if (it == flips.end()) {
      flips.push_back(e);
    } else {
      flips.erase(it);  // back to the heuristic's decision
    }
  }
  std::sort(flips.begin(), flips.end());
  return flips;
}

const std::vector<std::vector<int64_t>>& SearchStrategy::Groups() {
  if (groups_) return *groups_;
  const fusion::FusionPlan& base = state_.space().base();
  // Producer -> its flippable edges, consumer edges and sibling edges apart.
  std::map<std::pair<int64_t, bool>, std::vector<int64_t>> by_producer;
  for (int64_t e : state_.space().flippable()) {
    const fusion::FusionEdge& edge = base.edges[e];
    by_producer[{edge.producer, edge.is_sibling()}].push_back(e);
  }
  groups_.emplace();
  for (auto& [producer, edges] : by_producer) {
    if (edges.size() >= 2) groups_->push_back(std::move(edges));
  }
  return *groups_;
}

bool SearchStrategy::FusionMove() {
  if (state_.space().flippable().empty()) return false;
  Result<Formed> current = state_.Form(current_);
  if (!current) return false;
  state_.ChooseBestTiles(*current);
  std::optional<Point> chosen;
  std::optional<Formed> chosen_formed;
  double chosen_us = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kProposals; ++i) {
    std::vector<int64_t> flips = Propose(*current);
    if (tried_flips_.contains(flips)) continue;
    Result<Formed> formed = state_.Form(Point{flips, current_.tiles});
    if (!formed) {
      ++result_.invalid_candidates;
      tried_flips_.insert(flips);
      continue;
    }
    state_.ChooseBestTiles(*formed);
    double us = state_.Predict(*formed).us;
    if (us < chosen_us) {
      chosen_us = us;
      chosen = TuningState::Normalized(flips, *formed);
      chosen_formed = *std::move(formed);
    }
  }
  const double temperature = kStartTemperature * (1 - Progress());
  if (!chosen || !(chosen_us < current_us_ * (1 + temperature))) {
    result_.model_skipped += kProposals;
    return false;
  }
  tried_flips_.insert(chosen->flips);
  Result<double> us = state_.Measure(*chosen, *chosen_formed);
  if (!us) {
    ++result_.invalid_candidates;
    return true;
  }
  Consider(*chosen, *chosen_formed);
  state_.ChooseBestTiles(*chosen_formed);
  double settled = state_.Predict(*chosen_formed).us;
  double delta = settled - current_us_;
  if (delta < 0 || (temperature > 0 && random_.Uniform() < std::exp(-delta / (temperature * current_us_)))) {
    MoveTo(TuningState::Normalized(chosen->flips, *chosen_formed), settled);
  }
  return true;
}

}  // namespace kiln::autotune::internal
