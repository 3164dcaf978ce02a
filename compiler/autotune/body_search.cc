#include "compiler/autotune/body_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "base/clock.h"
#include "compiler/cost/cost_model.h"
#include "compiler/driver/plan_module.h"
#include "compiler/fusion/kernel_formation.h"
#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::autotune::internal {
namespace {

using Clock = std::chrono::steady_clock;
using Flips = std::vector<int64_t>;  // sorted edge indices of one computation's plan

// Moves measured together per computation in one program.
constexpr size_t kMovesPerTrial = 8;
// Edges of the slowest kernels considered per computation and round.
constexpr size_t kEdgesPerRound = 24;
// Rounds in a row that measure nothing before the search stops.
constexpr int kMaxIdleBodyRounds = 2;

Flips Toggled(const Flips& flips, const Flips& move) {
  std::set<int64_t> out(flips.begin(), flips.end());
  for (int64_t e : move) {
    if (!out.erase(e)) out.insert(e);
  }
  return Flips(out.begin(), out.end());
}

struct BodyPrediction {
  double us = 0;
  bool exact = true;
};

// One planned computation: its heuristic plan, the flips kept so far and
// what its kernels measured.
class BodySpace {
 public:
  BodySpace(const hlo::Computation& computation, fusion::FusionPlan heuristic, const fusion::TilingOptions& tiling,
            const runtime::ChipSpec& chip)
      : computation_(computation), heuristic_(std::move(heuristic)), tiling_(tiling), chip_(chip) {
    for (size_t e = 0; e < heuristic_.edges.size(); ++e) {
      if (heuristic_.edges[e].kind == fusion::DecisionKind::kProfitability) flippable_.push_back(static_cast<int64_t>(e));
    }
  }

  const std::string& name() const { return computation_.name(); }
  const hlo::Computation& computation() const { return computation_; }
  const fusion::FusionPlan& heuristic() const { return heuristic_; }
  const std::vector<int64_t>& flippable() const { return flippable_; }
  Flips& current() { return current_; }

  // The kernels `flips` form, memoized (null when they cannot be formed).
  const std::vector<fusion::Kernel>* Form(const Flips& flips) {
    auto [it, inserted] = formed_.try_emplace(flips);
    if (inserted) {
      fusion::FusionPlan plan;
      plan.kind = fusion::PlanKind::kTuned;
      Result<std::vector<fusion::FusionEdge>> edges = fusion::FlipEdges(heuristic_, flips);
      if (edges) {
        plan.edges = *std::move(edges);
        if (fusion::FormKernels(computation_, tiling_, plan)) {
          it->second = std::make_unique<std::vector<fusion::Kernel>>(std::move(plan.kernels));
        }
      }
    }
    return it->second.get();
  }

  void Learn(const std::vector<int64_t>& kernel, double us) { measured_[kernel] = us; }
  void Unmeasurable(const std::vector<int64_t>& kernel) { unmeasurable_.insert(kernel); }

  // What measured kernels took against the cost model (trips included).
  void Calibrate() {
    double measured = 0, analytic = 0;
    for (const auto& [kernel, us] : measured_) {
      auto it = analytic_.find(kernel);
      if (it == analytic_.end()) continue;
      measured += us;
      analytic += it->second;
    }
    if (measured > 0 && analytic > 0) scale_ = measured / analytic;
  }

  double KernelUs(const fusion::Kernel& kernel, bool& exact) {
    if (auto it = measured_.find(kernel.instructions); it != measured_.end()) return it->second;
    exact = false;
    if (unmeasurable_.contains(kernel.instructions)) return std::numeric_limits<double>::infinity();
    return Analytic(kernel) * scale_;
  }

  double Analytic(const fusion::Kernel& kernel) {
    auto [it, inserted] = analytic_.try_emplace(kernel.instructions, 0.0);
    if (inserted) it->second = cost::EstimateKernel(computation_, kernel, chip_).seconds * 1e6;
    return it->second;
  }

  BodyPrediction Predict(const Flips& flips) {
    BodyPrediction p;
    const std::vector<fusion::Kernel>* kernels = Form(flips);
    if (kernels == nullptr) return {std::numeric_limits<double>::infinity(), false};
    for (const fusion::Kernel& kernel : *kernels) p.us += KernelUs(kernel, p.exact);
    return p;
  }

  bool Tried(const Flips& flips) const { return tried_.contains(flips); }
  void MarkTried(const Flips& flips) { tried_.insert(flips); }

 private:
  const hlo::Computation& computation_;
  fusion::FusionPlan heuristic_;
  fusion::TilingOptions tiling_;
  const runtime::ChipSpec& chip_;
  std::vector<int64_t> flippable_;
  Flips current_;
  double scale_ = 1;
  std::map<Flips, std::unique_ptr<std::vector<fusion::Kernel>>> formed_;
  std::map<std::vector<int64_t>, double> measured_;
  std::map<std::vector<int64_t>, double> analytic_;
  std::set<std::vector<int64_t>> unmeasurable_;
  std::set<Flips> tried_;
};

struct Move {
  size_t space = 0;
  Flips edges;       // toggled together
  double delta = 0;  // predicted change of the computation's time
  bool exact = false;
  std::set<int64_t> touched;  // ids of the current plan's kernels it changes
};

// Step times of a measurement by step name; names seen twice are dropped
// (`ambiguous`), as a kernel's time must be its own.
std::unordered_map<std::string, double> StepTimes(const Measurement& m, std::set<std::string>& ambiguous) {
  std::unordered_map<std::string, double> out;
  for (const KernelTime& kernel : m.kernels) {
    for (const StepTime& step : kernel.steps) {
      auto [it, added] = out.try_emplace(step.name, step.us);
      if (!added) ambiguous.insert(step.name);
    }
  }
  for (const std::string& name : ambiguous) out.erase(name);
  return out;
}

// Records the kernel times of every planned computation of `variant` (its
// body_decisions name each kernel's step) into the spaces.
void LearnSteps(const driver::PreparedModule& variant, const Measurement& m, std::vector<BodySpace>& spaces,
                const std::unordered_map<std::string, size_t>& by_name) {
  std::set<std::string> ambiguous;
  const std::unordered_map<std::string, double> steps = StepTimes(m, ambiguous);
  for (const fusion::BodyDecisions& planned : variant.body_decisions) {
    auto found = by_name.find(planned.computation);
    if (found == by_name.end()) continue;
    BodySpace& space = spaces[found->second];
    const auto& instrs = space.computation().instructions();
    for (const fusion::BodyKernel& kernel : planned.kernels) {
      // A kernel left as steps of its instructions takes their times.
      std::vector<std::string> names;
      if (!kernel.step.empty()) {
        names.push_back(kernel.step);
      } else {
        for (int64_t i : kernel.instructions) names.emplace_back(instrs[i]->name());
      }
      double us = 0;
      bool known = true;
      for (const std::string& name : names) {
        if (ambiguous.contains(name)) known = false;
        if (auto it = steps.find(name); it != steps.end()) us += it->second;  // absent: a free op
      }
      if (known) {
        space.Learn(kernel.instructions, us);
      } else {
        space.Unmeasurable(kernel.instructions);
      }
    }
  }
}

// Instruction -> the kernel (position) that computes it; a duplicated
// producer maps to the last.
std::unordered_map<int64_t, int64_t> KernelOf(const std::vector<fusion::Kernel>& kernels) {
  std::unordered_map<int64_t, int64_t> kernel_of;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (int64_t i : kernels[k].instructions) kernel_of[i] = static_cast<int64_t>(k);
  }
  return kernel_of;
}

// The current plan's kernels (by position) that hold an instruction of `edges`.
std::set<int64_t> Touched(const fusion::FusionPlan& plan, const std::unordered_map<int64_t, int64_t>& kernel_of,
                          const Flips& edges) {
  std::set<int64_t> out;
  for (int64_t e : edges) {
    const fusion::FusionEdge& edge = plan.edges[e];
    for (int64_t i : {edge.producer, edge.consumer, edge.sibling}) {
      if (auto it = kernel_of.find(i); it != kernel_of.end()) out.insert(it->second);
    }
  }
  return out;
}

// Single flips of the edges on the slowest kernels, and all of one
// producer's flippable edges at once, each with its predicted change.
std::vector<Move> Propose(BodySpace& space, size_t index) {
  std::vector<Move> out;
  const std::vector<fusion::Kernel>* kernels = space.Form(space.current());
  if (kernels == nullptr) return out;
  std::vector<double> kernel_us;
  for (const fusion::Kernel& kernel : *kernels) {
    bool exact = true;
    kernel_us.push_back(space.KernelUs(kernel, exact));
  }
  const std::unordered_map<int64_t, int64_t> kernel_of = KernelOf(*kernels);
  std::vector<std::pair<double, int64_t>> weighted;
  std::map<int64_t, Flips> by_producer;
  for (int64_t e : space.flippable()) {
    double weight = 0;
    for (int64_t k : Touched(space.heuristic(), kernel_of, {e})) weight += kernel_us[k];
    weighted.emplace_back(weight, e);
    const fusion::FusionEdge& edge = space.heuristic().edges[e];
    if (!edge.is_sibling()) by_producer[edge.producer].push_back(e);
  }
  std::sort(weighted.begin(), weighted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // The untried moves worth measuring on the slowest kernels: single flips
  // and, beside each producer's first, all of that producer's at once.
  const BodyPrediction now = space.Predict(space.current());
  std::set<int64_t> producers;
  auto consider = [&](Flips edges) {
    const Flips next = Toggled(space.current(), edges);
    if (space.Tried(next)) return;
    const BodyPrediction p = space.Predict(next);
    if (!std::isfinite(p.us)) return;
    Move move;
    move.space = index;
    move.touched = Touched(space.heuristic(), kernel_of, edges);
    move.delta = p.us - now.us;
    move.exact = p.exact;
    // Known exactly: kept when it pays. Else measured, the most promising
    // first: a trial costs little next to what the model may miss.
    if (p.exact && !(move.delta < 0)) return;
    move.edges = std::move(edges);
    out.push_back(std::move(move));
  };
  for (const auto& [weight, e] : weighted) {
    if (out.size() >= kEdgesPerRound) break;
    consider({e});
    const fusion::FusionEdge& edge = space.heuristic().edges[e];
    if (!edge.is_sibling() && by_producer[edge.producer].size() > 1 && producers.insert(edge.producer).second) {
      consider(by_producer[edge.producer]);
    }
  }
  std::sort(out.begin(), out.end(), [](const Move& a, const Move& b) { return a.delta < b.delta; });
  return out;
}

std::string DescribeFlip(const BodySpace& space, int64_t e) {
  const fusion::FusionEdge& edge = space.heuristic().edges[e];
  const auto& instrs = space.computation().instructions();
  auto name = [&](int64_t i) { return "%" + std::string(instrs[i]->name()); };
  std::string text = edge.is_sibling() ? name(edge.consumer) + " + " + name(edge.sibling) + " (siblings reading " +
                                             name(edge.producer) + ")"
                                       : name(edge.producer) + " -> " + name(edge.consumer);
  return text + (edge.fused ? " unfused" : " fused") + " (in %" + space.name() + ")";
}

}  // namespace

double BodyShare(const Measurement& m) {
  double steps = 0;
  for (const KernelTime& kernel : m.kernels) {
    for (const StepTime& step : kernel.steps) steps += step.us;
  }
  return m.kernel_us > 0 ? std::clamp(steps / m.kernel_us, 0.0, 1.0) : 0.0;
}

Result<BodySearchResult> SearchBodies(const driver::PreparedModule& prepared, const driver::CompileOptions& options,
                                      Runner& runner, const Measurement& baseline, const BodySearchBudget& budget,
                                      TuneResult& result) {
  BodySearchResult out;
  if (!prepared.unfused_bodies_text || !prepared.bodies_fused) return out;
  const runtime::ChipSpec& chip = *runtime::FindChip(options.chip);
  auto model_start = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> program,
                        hlo::ParseModule(*prepared.unfused_bodies_text, "unfused-bodies.hlo"));
  fusion::PlannerOptions planner;
  planner.tiling = driver::TilingOptionsFor(options, chip);
  const fusion::PlannerOptions body_options = fusion::BodyPlannerOptions(planner);
  std::vector<BodySpace> spaces;
  std::unordered_map<std::string, size_t> by_name;
  for (hlo::Computation* computation : fusion::ControlFlowComputations(*program)) {
    Result<fusion::FusionPlan> plan = fusion::PlanComputation(*computation, fusion::PlanKind::kHeuristic, body_options);
    if (!plan) continue;
    BodySpace space(*computation, *std::move(plan), body_options.tiling, chip);
    if (space.flippable().empty()) continue;
    by_name.emplace(space.name(), spaces.size());
    spaces.push_back(std::move(space));
  }
  out.computations = static_cast<int64_t>(spaces.size());
  LearnSteps(prepared, baseline, spaces, by_name);
  std::vector<double> heuristic_us;
  for (BodySpace& space : spaces) {
    if (const auto* kernels = space.Form({})) {
      for (const fusion::Kernel& kernel : *kernels) space.Analytic(kernel);
    }
    space.Calibrate();
    space.MarkTried({});
    heuristic_us.push_back(space.Predict({}).us);
  }
  result.ms.model += MsSince(model_start);

  auto budget_left = [&] {
    if (budget.tune != nullptr && budget.tune->cancelled && budget.tune->cancelled()) return false;
    if (budget.max_trials > 0 && result.trials >= budget.max_trials) return false;
    return Clock::now() < budget.deadline;
  };
  int idle = 0;
  while (!spaces.empty() && idle < kMaxIdleBodyRounds && budget_left()) {
    model_start = Clock::now();
    // Per computation: moves known to pay are kept at once; the others
    // worth measuring go into this round's program, on kernels apart.
    fusion::BodyFlips trial;
    std::vector<Move> measuring;
    bool changed = false;
    for (size_t s = 0; s < spaces.size(); ++s) {
      BodySpace& space = spaces[s];
      std::set<int64_t> used;
      Flips flips = space.current();
      size_t taken = 0;
      for (Move& move : Propose(space, s)) {
        if (taken >= kMovesPerTrial) break;
        bool apart = true;
        for (int64_t k : move.touched) apart &= !used.contains(k);
        if (!apart) continue;
        if (move.exact) {
          space.current() = Toggled(space.current(), move.edges);
          ++out.moves_kept;
          changed = true;
          break;  // the plan changed: propose again from it
        }
        const Flips next = Toggled(flips, move.edges);
        if (space.Form(next) == nullptr) continue;
        used.insert(move.touched.begin(), move.touched.end());
        flips = next;
        measuring.push_back(std::move(move));
        ++taken;
      }
      if (!flips.empty()) trial[space.name()] = flips;
    }
    result.ms.model += MsSince(model_start);
    if (changed) {
      idle = 0;
      continue;
    }
    if (measuring.empty()) {
      ++idle;
      if (idle >= kMaxIdleBodyRounds) break;
      continue;
    }
    for (const Move& move : measuring) {
      BodySpace& space = spaces[move.space];
      space.MarkTried(Toggled(space.current(), move.edges));
    }
    out.moves_measured += static_cast<int64_t>(measuring.size());
    auto compile_start = Clock::now();
    Result<driver::PreparedModule> variant = driver::WithBodyFlips(prepared, options, trial);
    Result<driver::CompiledPlan> plan =
        variant ? driver::PlanPrepared(*variant, options) : Result<driver::CompiledPlan>(variant.error());
    Result<driver::CompileOutput> lowered =
        plan ? driver::LowerPlanned(*variant, options, *std::move(plan)) : Result<driver::CompileOutput>(plan.error());
    result.ms.compile += MsSince(compile_start);
    if (!lowered) {
      ++result.invalid_candidates;
      continue;
    }
    ++result.trials;
    auto timing_start = Clock::now();
    Result<Measurement> m = runner.Measure(lowered->executable, /*strict_tiling=*/true);
    result.ms.timing += MsSince(timing_start);
    if (!m || !m->ok()) {
      ++result.invalid_candidates;
      continue;
    }
    LearnSteps(*variant, *m, spaces, by_name);
    // Each move on its own, now that its kernels are measured: kept when
    // the computation's time falls, best first.
    std::sort(measuring.begin(), measuring.end(), [](const Move& a, const Move& b) { return a.delta < b.delta; });
    idle = 1;  // a round that keeps nothing counts towards the stop
    for (const Move& move : measuring) {
      BodySpace& space = spaces[move.space];
      const Flips next = Toggled(space.current(), move.edges);
      const BodyPrediction now = space.Predict(space.current());
      const BodyPrediction then = space.Predict(next);
      if (then.exact && now.exact && then.us < now.us * (1 - 1e-6)) {
        space.current() = next;
        ++out.moves_kept;
        idle = 0;
      }
    }
  }
  for (size_t s = 0; s < spaces.size(); ++s) {
    BodySpace& space = spaces[s];
    if (space.current().empty()) continue;
    const BodyPrediction p = space.Predict(space.current());
    if (!p.exact || !(p.us < heuristic_us[s])) continue;
    out.predicted_gain_us += heuristic_us[s] - p.us;
    out.flips[space.name()] = space.current();
    for (int64_t e : space.current()) out.described.push_back(DescribeFlip(space, e));
  }
  return out;
}

}  // namespace kiln::autotune::internal
