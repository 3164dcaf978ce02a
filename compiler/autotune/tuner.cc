#include "compiler/autotune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/clock.h"
#include "compiler/autotune/body_check.h"
#include "compiler/autotune/body_search.h"
#include "compiler/autotune/schedule_search.h"
#include "compiler/autotune/rank_correlation.h"
#include "compiler/autotune/same_computation.h"
#include "compiler/autotune/search_strategy.h"
#include "compiler/autotune/tile_record.h"
#include "compiler/autotune/tuning_state.h"

namespace kiln::autotune {
namespace {

using Clock = std::chrono::steady_clock;
using internal::Formed;
using internal::PairKey;
using internal::Point;
using internal::TuningState;

// Start tiles from stored records: a heuristic kernel whose subgraph was
// tuned before starts on its best recorded tile.
Point TransferredStart(TuningState& state, RecordStore& records, TuneResult& result) {
  Point start;
  Result<Formed> formed = state.Form(start);
  if (!formed) return start;
  for (const fusion::Kernel& kernel : formed->kernels) {
    const KernelChoices& choices = state.space().Choices(kernel);
    if (choices.tiles.size() < 2) continue;
    const std::string* key = state.WorkloadKey(kernel);
    if (key == nullptr) continue;
    Result<std::optional<TuningTrial>> best = records.Best(*key, result.chip);
    if (!best || !*best) continue;
    for (size_t t = 0; t < choices.tiles.size(); ++t) {
      if (TileText(choices.tiles[t]) == (*best)->plan) {
        if (t != 0) start.tiles[kernel.instructions] = static_cast<int>(t);
        ++result.transfer_hits;
        break;
      }
    }
  }
  return start;
}

// Every kernel/tile pair measured (or refused) under its workload key.
void StoreRecords(TuningState& state, RecordStore& records, TuneResult& result) {
  for (const auto& [pair, kernel] : state.tried()) {
    const KernelChoices* choices = state.space().Find(pair.first);
    const std::string* key = state.WorkloadKey(kernel);
    if (choices == nullptr || key == nullptr) continue;
    TuningTrial trial;
    trial.workload_key = *key;
    trial.chip = result.chip;
    trial.plan = TileText(choices->tiles[pair.second]);
    trial.measured_us = state.MeasuredUs(pair);
    if (auto bad = state.invalid().find(pair); bad != state.invalid().end()) trial.error = bad->second;
    if (!trial.measured_us && !trial.error) continue;
    (void)records.Add(trial);  // records help later tunings; losing one loses no result
  }
}

// Rows of the report: the tuned program's kernels, then the heuristic's
// that tuning fused away.
std::vector<KernelComparison> CompareKernels(const Measurement& heuristic, const Measurement* tuned) {
  std::vector<KernelComparison> rows;
  std::unordered_map<std::string, const KernelTime*> base;
  for (const KernelTime& k : heuristic.kernels) base[k.name] = &k;
  std::unordered_map<std::string, bool> seen;
  for (const KernelTime& k : tuned != nullptr ? tuned->kernels : heuristic.kernels) {
    KernelComparison row;
    row.name = k.name;
    row.kind = k.kind;
    row.tuned_us = k.us;
    row.tuned_tiling = k.tiling;
    if (auto it = base.find(k.name); it != base.end()) {
      row.heuristic_us = it->second->us;
      row.heuristic_tiling = it->second->tiling;
      seen[k.name] = true;
    }
    rows.push_back(std::move(row));
  }
  for (const KernelTime& k : heuristic.kernels) {
    if (seen.contains(k.name)) continue;
    rows.push_back({k.name, k.kind, k.us, std::nullopt, k.tiling, ""});
  }
  return rows;
}

std::vector<std::string> DescribeFlips(const SearchSpace& space, const std::vector<int64_t>& flips) {
  std::vector<std::string> out;
  const auto& instrs = space.entry().instructions();
  for (int64_t e : flips) {
    const fusion::FusionEdge& edge = space.base().edges[e];
    std::string text = edge.is_sibling()
                           ? "%" + std::string(instrs[edge.consumer]->name()) + " + %" +
                                 std::string(instrs[edge.sibling]->name()) +
                                 (edge.rule == fusion::FusionRule::kHorizontal ? " (horizontal, reading %"
                                                                               : " (siblings reading %") +
                                 std::string(instrs[edge.producer]->name()) + ")"
                           : "%" + std::string(instrs[edge.producer]->name()) + " -> %" +
                                 std::string(instrs[edge.consumer]->name());
    out.push_back(text + (edge.fused ? " unfused" : " fused"));
  }
  return out;
}

// The heuristic's own kernels on their best measured tiles: what tiling
// alone gains (kernels never timed strictly keep their baseline time).
double TilesOnlyUs(TuningState& state, const Measurement& heuristic) {
  Result<Formed> formed = state.Form(Point{});
  if (!formed) return 0;
  std::unordered_map<std::string, double> base;
  double total = 0;
  for (const KernelTime& k : heuristic.kernels) {
    base[k.name] = k.us;
    total += k.us;
  }
  for (const fusion::Kernel& kernel : formed->kernels) {
    const KernelChoices& choices = state.space().Choices(kernel);
    // A kernel with one tile gains nothing from tiles (a loop kernel's
    // time may differ by its bodies' fusion instead).
    if (choices.tiles.size() < 2) continue;
    auto it = base.find(choices.root);
    if (it == base.end()) continue;
    double best = it->second;
    for (size_t t = 0; t < choices.tiles.size(); ++t) {
      if (std::optional<double> us = state.MeasuredUs({kernel.instructions, static_cast<int>(t)})) {
        best = std::min(best, *us);
      }
    }
    total -= it->second - best;
  }
  return total;
}

struct Checked {
  driver::CompileOutput out;
  Measurement measurement;
};

// How a final candidate's values are checked (TuneResult::verification).
enum class Verification { kWholeProgram, kKernels, kSameComputation };

// A plan checked at the end: the entry's point, with the bodies the body
// search chose or with the heuristic's.
struct Final {
  Point point;
  bool bodies = false;
};

// What the final checks compare against.
struct References {
  const driver::PreparedModule& prepared;  // the heuristic's bodies
  const driver::PreparedModule& active;    // the bodies searched (== prepared without body flips)
  const std::vector<uint8_t>& heuristic_exe;
  const std::vector<uint8_t>& active_heuristic_exe;  // the entry's heuristic plan on `active`
  double heuristic_us = 0;
};

// Lowers, times (strictly) and checks one final candidate; the error says
// why it may not replace the heuristic.
// Kernel by kernel, the instructions of the groups that could not be
// checked go to `refused` (the candidate is then refused too).
Result<Checked> CheckCandidate(TuningState& state, const Final& final, Runner& runner, Verification verification,
                               const References& refs, TuneResult& result, std::vector<std::string>& refused) {
  const Point& point = final.point;
  const bool bodies = final.bodies && !refs.active.body_flips.empty();
  const std::vector<uint8_t>& heuristic_exe = bodies ? refs.active_heuristic_exe : refs.heuristic_exe;
  const double heuristic_us = refs.heuristic_us;
  KILN_ASSIGN_OR_RETURN(Formed formed, state.Form(point));
  KILN_ASSIGN_OR_RETURN(driver::CompileOutput out,
                        bodies ? state.Lower(point, formed) : state.Lower(point, formed, refs.prepared.body_flips));
  ++result.trials;
  auto start = Clock::now();
  Result<Measurement> m = runner.Measure(out.executable, /*strict_tiling=*/true);
  result.ms.timing += MsSince(start);
  if (!m) return m.error().WithContext("timing the tuned program");
  if (!m->ok()) return FailedPreconditionError("the tuned program does not time strictly");
  if (!(m->device_us < heuristic_us)) {
    return FailedPreconditionError("the tuned program measured " + std::to_string(m->device_us) +
                                   " us, not faster than the heuristic's " + std::to_string(heuristic_us) + " us");
  }
  start = Clock::now();
  Status same = Ok();
  switch (verification) {
    case Verification::kWholeProgram:
      same = runner.CompareToReference(out.executable);
      break;
    case Verification::kKernels: {
      if (bodies) {
        // Each body kernel the heuristic does not form, against its
        // instructions: a kernel whose text equals theirs computes exactly
        // their values, the others are evaluated on random inputs.
        Result<std::vector<ModulePair>> pairs = internal::ChangedBodyKernels(refs.prepared, refs.active);
        std::vector<ModulePair> differing;
        int64_t identical = 0;
        if (pairs) {
          for (ModulePair& pair : *pairs) {
            if (pair.reference_hlo == pair.candidate_hlo) {
              ++identical;
            } else {
              differing.push_back(std::move(pair));
            }
          }
        }
        Result<KernelCheck> body_check = !pairs              ? Result<KernelCheck>(pairs.error())
                                         : differing.empty() ? Result<KernelCheck>(KernelCheck{})
                                                             : runner.CompareModulePairs(differing);
        if (!body_check) {
          result.ms.verify += MsSince(start);
          ++result.rejected_by_verification;
          return body_check.error().WithContext("body kernel check");
        }
        if (!body_check->refused_instructions.empty()) {
          result.ms.verify += MsSince(start);
          ++result.rejected_by_verification;
          return FailedPreconditionError(body_check->refused_why);
        }
        result.verified_body_kernels = identical + body_check->changed_kernels;
      }
      Result<KernelCheck> checked = runner.CompareChangedKernels(heuristic_exe, out.executable);
      if (!checked) {
        same = checked.error();
      } else if (!checked->refused_instructions.empty()) {
        refused = std::move(checked->refused_instructions);
        result.ms.verify += MsSince(start);
        ++result.rejected_by_verification;
        return FailedPreconditionError(checked->refused_why);
      } else {
        result.verified_kernels = checked->changed_kernels;
        result.verified_regions = checked->regions;
      }
      break;
    }
    case Verification::kSameComputation:
      same = SameComputation(heuristic_exe, out.executable);
      break;
  }
  result.ms.verify += MsSince(start);
  if (!same) {
    ++result.rejected_by_verification;
    return same.error().WithContext("output check");
  }
  return Checked{std::move(out), *std::move(m)};
}

// How often a final candidate is narrowed to the kernels that can be checked.
constexpr int kMaxReductions = 4;

// `point` without the flips whose edge names an instruction of `refused`,
// on its best tiles; nullopt when no flip would remain or none is undone.
std::optional<Point> WithoutFlipsTouching(TuningState& state, const Point& point,
                                          const std::vector<std::string>& refused) {
  const std::unordered_set<std::string_view> names(refused.begin(), refused.end());
  const auto& instrs = state.space().entry().instructions();
  auto touches = [&](int64_t index) { return index >= 0 && names.contains(instrs[index]->name()); };
  std::vector<int64_t> kept;
  for (int64_t e : point.flips) {
    const fusion::FusionEdge& edge = state.space().base().edges[e];
    if (touches(edge.producer) || touches(edge.consumer) || (edge.is_sibling() && touches(edge.sibling))) continue;
    kept.push_back(e);
  }
  if (kept.empty() || kept.size() == point.flips.size()) return std::nullopt;
  Result<Formed> formed = state.Form(Point{kept, {}});
  if (!formed) return std::nullopt;
  state.ChooseBestTiles(*formed);
  return TuningState::Normalized(std::move(kept), *formed);
}

bool Cancelled(const TuneOptions& tune) { return tune.cancelled && tune.cancelled(); }

Error CancelledAfter(const TuneResult& result) {
  return CancelledError("tuning cancelled after " + std::to_string(result.trials) + " trials");
}

}  // namespace

Result<TuneResult> Tune(hlo::Module& module, const driver::CompileOptions& options, Runner& runner,
                        RecordStore* records, const TuneOptions& tune) {
  KILN_RETURN_IF_ERROR(CheckBudget(tune));
  if (options.plan != fusion::PlanKind::kHeuristic) {
    return InvalidArgumentError("tuning starts from the heuristic plan; plan " +
                                std::string(fusion::PlanKindName(options.plan)) + " cannot be tuned");
  }
  const auto start = Clock::now();
  const driver::CompileOptions normalized = driver::NormalizedOptions(options);
  TuneResult result;
  result.chip = normalized.chip;
  KILN_ASSIGN_OR_RETURN(driver::PreparedModule prepared, driver::PrepareModuleForTuning(module, normalized));
  KILN_ASSIGN_OR_RETURN(driver::CompiledPlan heuristic, driver::PlanPrepared(prepared, normalized));
  KILN_ASSIGN_OR_RETURN(driver::CompileOutput heuristic_out, driver::LowerPlanned(prepared, normalized, heuristic));
  result.fingerprint = heuristic_out.fingerprint;
  result.key = heuristic_out.fingerprint.key.Hex();
  result.heuristic_executable = heuristic_out.executable;
  result.heuristic_compile_ms = heuristic_out.compile_ms;
  const auto baseline_start = Clock::now();
  Result<Measurement> baseline = runner.Measure(heuristic_out.executable, /*strict_tiling=*/false);
  const double baseline_ms = MsSince(baseline_start);
  if (!baseline) return baseline.error().WithContext("timing the heuristic executable");
  for (const KernelTime& k : baseline->kernels) {
    if (k.error) return FailedPreconditionError("timing the heuristic executable: kernel " + k.name + ": " + *k.error);
  }
  result.heuristic_us = baseline->device_us;
  result.tuned_us = baseline->device_us;
  result.ms.prepare = MsSince(start);

  auto verify_start = Clock::now();
  Status reference = runner.SetReference(heuristic_out.executable, tune.input_seed);
  const double reference_ms = MsSince(verify_start);
  result.ms.verify += reference_ms;
  // The final output check runs the program once more: under a time budget
  // the search leaves room for it, and does not search fusion (which needs
  // the check) when the check alone would take a third of the budget.
  TuneOptions search = tune;
  bool check_fits = true;
  if (tune.max_seconds > 0) {
    check_fits = reference_ms / 1000 < tune.max_seconds / 3;
  }
  // Where the whole program cannot be compared (too large to evaluate here,
  // a slice's program, an evaluation over a third of the budget), fusion
  // changes are checked kernel by kernel when the runner can.
  const bool whole = reference.has_value() && check_fits;
  Verification verification = Verification::kSameComputation;
  if (whole) {
    verification = Verification::kWholeProgram;
  } else if (runner.ChecksKernels()) {
    verification = Verification::kKernels;
  }
  // Loop bodies and branches first, where a training step spends its
  // time; the entry is then searched with the bodies found.
  internal::BodySearchResult bodies;
  std::string body_note;
  if (verification != Verification::kSameComputation && prepared.unfused_bodies_text != nullptr) {
    const double share = std::min(internal::BodyShare(*baseline), 0.6);
    internal::BodySearchBudget body_budget;
    body_budget.tune = &tune;
    if (tune.max_seconds > 0) {
      const double left = tune.max_seconds * (whole ? 1.0 : 0.75) - std::chrono::duration<double>(Clock::now() - start).count();
      body_budget.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(std::max(0.0, left * share)));
    }
    if (tune.max_trials > 0) {
      body_budget.max_trials = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(tune.max_trials) * share));
    }
    if (share >= 0.05) {
      Result<internal::BodySearchResult> found = internal::SearchBodies(prepared, normalized, runner, *baseline,
                                                                        body_budget, result);
      if (found) {
        bodies = *std::move(found);
        result.body_computations = bodies.computations;
        result.body_moves_measured = bodies.moves_measured;
      } else {
        body_note = "loop bodies not searched: " + found.error().ToString();
      }
    }
  }
  std::optional<driver::PreparedModule> variant;
  if (!bodies.flips.empty()) {
    Result<driver::PreparedModule> fused = driver::WithBodyFlips(prepared, normalized, bodies.flips);
    if (fused) {
      variant = *std::move(fused);
    } else {
      body_note = "the loop bodies found could not be fused again: " + fused.error().ToString();
      bodies = {};
    }
  }
  const driver::PreparedModule& active = variant ? *variant : prepared;
  std::optional<driver::CompiledPlan> variant_heuristic;
  std::vector<uint8_t> active_heuristic_exe = heuristic_out.executable;
  if (variant) {
    KILN_ASSIGN_OR_RETURN(variant_heuristic, driver::PlanPrepared(*variant, normalized));
    KILN_ASSIGN_OR_RETURN(driver::CompileOutput lowered, driver::LowerPlanned(*variant, normalized, *variant_heuristic));
    active_heuristic_exe = std::move(lowered.executable);
  }
  SearchSpace space(active, normalized, variant_heuristic ? *variant_heuristic : heuristic);
  result.fusion_searched = verification != Verification::kSameComputation &&
                           (!space.flippable().empty() || result.body_computations > 0);
  if (result.fusion_searched && whole && tune.max_seconds > 0) {
    search.max_seconds = std::max(tune.max_seconds - 1.5 * reference_ms / 1000, tune.max_seconds / 10);
  } else if (result.fusion_searched && tune.max_seconds > 0) {
    // Kernel-by-kernel checks of the final candidates, whose cost is not
    // known before, get the last quarter of the budget.
    search.max_seconds = tune.max_seconds * 0.75;
  }
  const std::string why_not_whole =
      reference ? "evaluating the outputs takes " + std::to_string(static_cast<int64_t>(reference_ms)) +
                      " ms, over a third of the budget"
                : "outputs cannot be compared whole here (" + reference.error().ToString() + ")";
  if (space.flippable().empty() && result.body_computations == 0) {
    result.fusion_note = "no fusion decision is a profitability choice";
  } else if (verification == Verification::kKernels) {
    result.fusion_note = why_not_whole + ": fusion changes are checked kernel by kernel";
  } else if (verification == Verification::kSameComputation) {
    result.fusion_note = why_not_whole + ": only tiles, which leave the computation as it is, were searched";
  }
  if (!body_note.empty()) result.fusion_note += (result.fusion_note.empty() ? "" : "; ") + body_note;
  // On a slice the schedule is searched last, on the plan accepted: the
  // time of two orders, each lowered and timed once, is kept from the
  // search's budget (the best order is timed in any case).
  const bool schedule_searched = !normalized.topology.empty();
  if (schedule_searched && tune.max_seconds > 0) {
    const double reserve_s = 2 * 1.5 * baseline_ms / 1000;
    search.max_seconds = std::max(std::min(search.max_seconds, tune.max_seconds - reserve_s), tune.max_seconds / 10);
  }

  if (Cancelled(tune)) return CancelledAfter(result);
  TuningState state(space, active, normalized, runner, result);
  Point begin;
  if (records != nullptr) {
    auto records_start = Clock::now();
    begin = TransferredStart(state, *records, result);
    result.ms.records += MsSince(records_start);
  }
  internal::SearchStrategy strategy(state, search, result.fusion_searched, start, /*reserve=*/2, result);
  strategy.Run(begin);
  if (Cancelled(tune)) {
    // What was measured stays useful to later tunings; nothing else is kept.
    if (records != nullptr) StoreRecords(state, *records, result);
    return CancelledAfter(result);
  }

  // The best plan must time faster than the heuristic and compute what it
  // computes; when a plan with flips fails, its tiles alone may still pass.
  const Measurement* tuned_measurement = nullptr;
  Checked accepted;
  Final accepted_final;
  // The search compares kernel sums (what its predictions add up); the
  // final check compares device times, as a run reports them.
  if (!strategy.best() || !(strategy.best_us() < baseline->kernel_us)) {
    result.decision = "no plan faster than the heuristic was found; the heuristic stays";
  } else {
    const bool with_bodies = !active.body_flips.empty();
    std::vector<Final> finals = {{*strategy.best(), with_bodies}};
    if (!strategy.best()->flips.empty()) {
      Result<Formed> plain = state.Form(Point{});
      if (plain) {
        state.ChooseBestTiles(*plain);
        finals.push_back({TuningState::Normalized({}, *plain), with_bodies});
      }
    }
    // Bodies that cannot be checked keep the heuristic's form.
    if (with_bodies) finals.push_back({*strategy.best(), false});
    const References refs{prepared, active, result.heuristic_executable, active_heuristic_exe, result.heuristic_us};
    int reductions = 0;
    for (size_t f = 0; f < finals.size(); ++f) {
      const Final final = finals[f];
      const Point& point = final.point;
      const bool bodies_changed = final.bodies && with_bodies;
      // Checked kernel by kernel (evaluations of unknown cost), past the
      // budget only the plan of tiles alone (checked exactly, at no
      // evaluation) is still tried. A whole-program check has its time
      // reserved by the search.
      const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
      if ((!point.flips.empty() || bodies_changed) && verification == Verification::kKernels && tune.max_seconds > 0 &&
          elapsed_s > tune.max_seconds && f + 1 < finals.size()) {
        result.decision += (result.decision.empty() ? "" : "; ") + std::string("the budget ended before plan ") +
                           std::to_string(f + 1) + " with fusion changes was checked";
        continue;
      }
      // Tiles alone leave every kernel's HLO as it is: nothing to evaluate.
      const Verification how =
          point.flips.empty() && !bodies_changed ? Verification::kSameComputation : verification;
      std::vector<std::string> refused;
      Result<Checked> checked = CheckCandidate(state, final, runner, how, refs, result, refused);
      if (!checked) {
        result.decision += (result.decision.empty() ? "" : "; ") + std::string("rejected: ") + checked.error().ToString();
        // Kernels that could not be checked keep the heuristic's form: the
        // flips that touch them are undone and the rest checked again.
        if (!refused.empty() && reductions < kMaxReductions) {
          if (std::optional<Point> reduced = WithoutFlipsTouching(state, point, refused)) {
            ++reductions;
            result.kept_heuristic_instructions += static_cast<int64_t>(refused.size());
            finals.insert(finals.begin() + static_cast<std::ptrdiff_t>(f) + 1, Final{*std::move(reduced), final.bodies});
          }
        }
        continue;
      }
      accepted = *std::move(checked);
      accepted_final = final;
      tuned_measurement = &accepted.measurement;
      result.accepted = true;
      result.tuned_us = accepted.measurement.device_us;
      result.tuned_executable = accepted.out.executable;
      Result<Formed> formed = state.Form(point);
      if (formed) result.edits = state.Edits(point, *formed);
      if (!bodies_changed) result.edits.body_flips.clear();
      result.edge_flips = DescribeFlips(space, point.flips);
      if (bodies_changed) {
        result.body_flips = bodies.described;
        result.body_gain_us = bodies.predicted_gain_us;
      }
      result.tile_changes = static_cast<int64_t>(result.edits.tiles.size());
      std::string checked_by = how == Verification::kWholeProgram ? "outputs equal the heuristic's on random inputs"
                        : how == Verification::kKernels
                            ? "each of its " + std::to_string(result.verified_kernels) +
                                  " changed kernels computes the heuristic's values on random inputs" +
                                  (bodies_changed ? " and each of its " + std::to_string(result.verified_body_kernels) +
                                                        " changed body kernels its instructions' values"
                                                  : std::string())
                            : "computes exactly what the heuristic does (tiles only)";
      result.decision = (result.decision.empty() ? "" : result.decision + "; ") + "accepted: faster and " + checked_by;
      result.verification = how == Verification::kWholeProgram ? "whole program"
                            : how == Verification::kKernels    ? "kernel by kernel"
                                                               : "same computation";
      break;
    }
  }
  // The schedule of the plan accepted (else the heuristic's kernels): orders
  // that hide more of the collectives, each kept only when faster and of the
  // same dataflow.
  double schedule_gain_us = 0;
  if (schedule_searched && !Cancelled(tune)) {
    const bool bodies_changed = result.accepted && accepted_final.bodies && !active.body_flips.empty();
    const Point base_point = result.accepted ? accepted_final.point : Point{};
    const std::vector<uint8_t>& base_exe = result.accepted ? result.tuned_executable : result.heuristic_executable;
    const Measurement& base_measurement = result.accepted ? accepted.measurement : *baseline;
    const auto deadline = tune.max_seconds > 0
                              ? start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(tune.max_seconds))
                              : Clock::time_point::max();
    Result<internal::ScheduleSearchResult> schedule =
        internal::SearchSchedule(state, base_point, bodies_changed ? active.body_flips : prepared.body_flips, base_exe,
                                 base_measurement, runner, deadline, result);
    if (!schedule) {
      result.schedule_note = "schedule not searched: " + schedule.error().ToString();
    } else {
      schedule_gain_us = internal::RecordSchedule(state, base_point, *schedule, accepted.measurement, result);
      if (schedule->improved) tuned_measurement = &accepted.measurement;
    }
  }
  if (result.accepted) {
    double gain = result.heuristic_us - result.tuned_us;
    result.schedule_gain_us = std::clamp(schedule_gain_us, 0.0, gain);
    gain -= result.schedule_gain_us;
    double tiles = result.edits.flipped_edges.empty() && result.edits.body_flips.empty() ? gain : baseline->kernel_us - TilesOnlyUs(state, *baseline);
    result.tiling_gain_us = std::clamp(tiles, 0.0, gain);
    result.body_gain_us = std::clamp(result.body_gain_us, 0.0, gain - result.tiling_gain_us);
    result.fusion_gain_us = gain - result.tiling_gain_us - result.body_gain_us;
  }
  result.kernels = CompareKernels(*baseline, tuned_measurement);
  result.spearman_analytic = SpearmanCorrelation(state.analytic_series(), state.measured_series());
  result.spearman_calibrated = SpearmanCorrelation(state.calibrated_series(), state.measured_series());
  result.ranked_kernels = static_cast<int64_t>(state.measured_series().size());
  if (records != nullptr) {
    auto records_start = Clock::now();
    StoreRecords(state, *records, result);
    result.ms.records += MsSince(records_start);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

Status CheckBudget(const TuneOptions& options) {
  if (options.max_trials < 0) return InvalidArgumentError("the trial budget must be positive, got " + std::to_string(options.max_trials));
  if (!(options.max_seconds >= 0) || !std::isfinite(options.max_seconds)) {
    return InvalidArgumentError("the time budget must be a positive number of seconds");
  }
  if (options.max_trials == 0 && options.max_seconds == 0) {
    return InvalidArgumentError("a tuning budget is needed: a number of trials or of seconds, above zero");
  }
  if (options.max_trials > kMaxTrials) {
    return InvalidArgumentError("a budget of " + std::to_string(options.max_trials) + " trials is absurd (at most " +
                                std::to_string(kMaxTrials) + ")");
  }
  if (options.max_seconds > kMaxSeconds) {
    return InvalidArgumentError("a budget of " + std::to_string(static_cast<int64_t>(options.max_seconds)) +
                                " s is absurd (at most a week, " + std::to_string(static_cast<int64_t>(kMaxSeconds)) +
                                " s)");
  }
  return Ok();
}

}  // namespace kiln::autotune
