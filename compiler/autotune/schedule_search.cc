#include "compiler/autotune/schedule_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "compiler/autotune/same_dataflow.h"
#include "compiler/fusion/kernel_schedule.h"
#include "compiler/fusion/op_class.h"
#include "compiler/hlo/opcode.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::autotune::internal {
namespace {

using Clock = std::chrono::steady_clock;

// A kernel's place among the ready ones: the smaller runs first.
using ScheduleKey = std::pair<double, double>;

// The bytes live while an order runs (ScheduleProblem's model).
class LiveBytes {
 public:
  explicit LiveBytes(const ScheduleProblem& problem) : problem_(problem), remaining_(problem.bytes.size(), 0) {
    for (const ScheduledKernel& k : problem.kernels) {
      for (int64_t b : k.reads) ++remaining_[b];
    }
  }
  double live() const { return live_; }
  double peak() const { return peak_; }
  // Live bytes while `k` runs (its roots allocated, its inputs live) and
  // after it, were it to run next.
  std::pair<double, double> IfRun(int64_t k) const {
    double during = live_, after = 0;
    const ScheduledKernel& kernel = problem_.kernels[k];
    for (int64_t r : kernel.defines) {
      during += problem_.bytes[r];
      if (remaining_[r] == 0 && !problem_.returned[r]) after -= problem_.bytes[r];
    }
    for (int64_t b : kernel.reads) {
      if (remaining_[b] == 1 && !problem_.returned[b]) after -= problem_.bytes[b];
    }
    return {during, during + after};
  }
  void Run(int64_t k) {
    auto [during, after] = IfRun(k);
    peak_ = std::max(peak_, during);
    live_ = after;
    for (int64_t b : problem_.kernels[k].reads) --remaining_[b];
  }

 private:
  const ScheduleProblem& problem_;
  std::vector<int64_t> remaining_;  // buffer -> readers not yet run
  double live_ = 0, peak_ = 0;
};

struct TwoEngineRun {
  std::vector<int64_t> started;  // the kernels in the order they started
  double us = 0;                 // when the last ends
  double peak_bytes = 0;
};

// List-schedules the kernels on the core and the links, the core taking the
// ready kernel of smallest key (else the one ready soonest) unless running
// it would keep more than `limit` bytes live, then the ready kernel leaving
// the fewest live; the links take the collectives in index order.
TwoEngineRun TwoEngineSchedule(const ScheduleProblem& problem, const std::vector<ScheduleKey>& key, double limit) {
  const std::vector<ScheduledKernel>& kernels = problem.kernels;
  const size_t n = kernels.size();
  std::vector<std::vector<int64_t>> after(n);
  std::vector<int64_t> waiting(n, 0);
  for (size_t k = 0; k < n; ++k) {
    for (int64_t b : kernels[k].before) {
      if (b < 0 || static_cast<size_t>(b) >= n) continue;
      after[b].push_back(static_cast<int64_t>(k));
      ++waiting[k];
    }
  }
  std::vector<double> ready(n, 0);
  using Entry = std::pair<ScheduleKey, int64_t>;
  std::set<Entry> startable;                 // compute kernels ready by the core's time, by key
  std::set<std::pair<double, Entry>> later;  // compute kernels ready after it, by when
  std::set<int64_t> links_ready;             // collectives whose operands are scheduled
  LiveBytes live(problem);
  double core = 0, links = 0;
  auto offer = [&](int64_t k) {
    if (kernels[k].on_links) {
      links_ready.insert(k);
    } else if (ready[k] <= core) {
      startable.insert({key[k], k});
    } else {
      later.insert({ready[k], {key[k], k}});
    }
  };
  for (size_t k = 0; k < n; ++k) {
    if (waiting[k] == 0) offer(static_cast<int64_t>(k));
  }
  TwoEngineRun run;
  run.started.reserve(n);
  while (run.started.size() < n) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    double link_start = kNever, core_start = kNever;
    int64_t link_pick = -1;
    std::optional<Entry> core_pick;
    if (!links_ready.empty()) {
      link_pick = *links_ready.begin();
      link_start = std::max(links, ready[link_pick]);
    }
    if (!startable.empty()) {
      core_pick = *startable.begin();
      core_start = core;
      if (live.IfRun(core_pick->second).first > limit) {
        // Over the limit: the ready kernel that leaves the fewest bytes live.
        double fewest = kNever;
        for (const Entry& e : startable) {
          const double left = live.IfRun(e.second).second;
          if (left < fewest) {
            fewest = left;
            core_pick = e;
          }
        }
      }
    } else if (!later.empty()) {
      core_pick = later.begin()->second;
      core_start = later.begin()->first;
    }
    if (link_pick < 0 && !core_pick) break;  // a cycle: not from a valid plan
    int64_t pick;
    double start;
    if (link_pick >= 0 && link_start <= core_start) {
      pick = link_pick;
      start = link_start;
      links_ready.erase(links_ready.begin());
      links = start + kernels[pick].us;
    } else {
      pick = core_pick->second;
      start = core_start;
      if (!startable.erase(*core_pick)) later.erase(later.begin());
      core = start + kernels[pick].us;
      while (!later.empty() && later.begin()->first <= core) {
        startable.insert(later.begin()->second);
        later.erase(later.begin());
      }
    }
    live.Run(pick);
    run.started.push_back(pick);
    const double finish = start + kernels[pick].us;
    run.us = std::max(run.us, finish);
    for (int64_t u : after[pick]) {
      ready[u] = std::max(ready[u], finish);
      if (--waiting[u] == 0) offer(u);
    }
  }
  run.peak_bytes = live.peak();
  return run;
}

// Each kernel's longest path to the end, itself included (the kernels'
// indices are a valid order: producers first).
std::vector<double> BottomLevels(const std::vector<ScheduledKernel>& kernels) {
  const size_t n = kernels.size();
  std::vector<double> level(n, 0), longest_after(n, 0);
  for (size_t k = n; k-- > 0;) {
    level[k] = kernels[k].us + longest_after[k];
    for (int64_t b : kernels[k].before) {
      if (b >= 0 && static_cast<size_t>(b) < n) longest_after[b] = std::max(longest_after[b], level[k]);
    }
  }
  return level;
}

// Per kernel, the position among the collectives of the first collective it
// feeds (itself when it is one); collectives' count when it feeds none.
std::vector<double> FirstCollectiveFed(const std::vector<ScheduledKernel>& kernels) {
  const size_t n = kernels.size();
  std::vector<double> position(n, std::numeric_limits<double>::infinity());
  double count = 0;
  for (size_t k = 0; k < n; ++k) {
    if (kernels[k].on_links) position[k] = count++;
  }
  for (size_t k = n; k-- > 0;) {
    for (int64_t b : kernels[k].before) {
      if (b >= 0 && static_cast<size_t>(b) < n) position[b] = std::min(position[b], position[k]);
    }
  }
  for (double& p : position) p = std::min(p, count);
  return position;
}

bool IsIdentity(const std::vector<int64_t>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<ScheduleKey> PositionKeys(size_t n, const std::vector<int64_t>& order) {
  std::vector<ScheduleKey> key(n, {static_cast<double>(n), 0.0});
  for (size_t p = 0; p < order.size(); ++p) {
    if (order[p] >= 0 && static_cast<size_t>(order[p]) < n) key[order[p]] = {static_cast<double>(p), 0};
  }
  return key;
}

std::string Gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

}  // namespace

double ListScheduledUs(const ScheduleProblem& problem, const std::vector<int64_t>& order) {
  constexpr double kNoLimit = std::numeric_limits<double>::infinity();
  return TwoEngineSchedule(problem, PositionKeys(problem.kernels.size(), order), kNoLimit).us;
}

double PeakLiveBytes(const ScheduleProblem& problem, const std::vector<int64_t>& order) {
  LiveBytes live(problem);
  for (int64_t k : order) live.Run(k);
  return live.peak();
}

std::vector<ScheduleOrder> LatencyHidingOrders(const ScheduleProblem& problem) {
  std::vector<ScheduleOrder> orders;
  const std::vector<ScheduledKernel>& kernels = problem.kernels;
  if (std::none_of(kernels.begin(), kernels.end(), [](const ScheduledKernel& k) { return k.on_links; })) {
    return orders;
  }
  const size_t n = kernels.size();
  std::vector<int64_t> current(n);
  for (size_t k = 0; k < n; ++k) current[k] = static_cast<int64_t>(k);
  const double current_peak = PeakLiveBytes(problem, current);
  const std::vector<double> level = BottomLevels(kernels);
  const std::vector<double> fed = FirstCollectiveFed(kernels);
  std::vector<ScheduleKey> critical(n), feeders(n);
  for (size_t k = 0; k < n; ++k) {
    critical[k] = {-level[k], static_cast<double>(k)};
    feeders[k] = {fed[k], -level[k]};
  }
  std::vector<std::pair<std::string, double>> limits = {{"within the current order's peak", current_peak}};
  if (problem.memory_limit > current_peak) {
    limits.push_back({"within " + Gib(problem.memory_limit) + " live", problem.memory_limit});
  }
  for (const auto& [name, key] : {std::pair<const char*, const std::vector<ScheduleKey>*>{"critical path", &critical},
                                  {"collective feeders first", &feeders}}) {
    for (const auto& [limit_name, limit] : limits) {
      TwoEngineRun run = TwoEngineSchedule(problem, *key, limit);
      if (run.started.size() != n || IsIdentity(run.started)) continue;
      if (std::any_of(orders.begin(), orders.end(), [&](const ScheduleOrder& o) { return o.order == run.started; })) {
        continue;
      }
      orders.push_back({std::string(name) + ", " + limit_name, std::move(run.started), run.us, run.peak_bytes});
    }
  }
  std::stable_sort(orders.begin(), orders.end(),
                   [](const ScheduleOrder& a, const ScheduleOrder& b) { return a.simulated_us < b.simulated_us; });
  return orders;
}

bool RunsOnLinks(const hlo::Computation& entry, const fusion::Kernel& kernel) {
  for (int64_t i : kernel.instructions) {
    const hlo::Opcode op = entry.instructions()[i]->opcode();
    if (hlo::CategoryOf(op) != hlo::OpcodeCategory::kCollective) continue;
    if (hlo::OpcodeName(op).ends_with("-done")) continue;
    return true;
  }
  return false;
}

Result<ScheduleSearchResult> SearchSchedule(TuningState& state, const Point& point, const fusion::BodyFlips& bodies,
                                            const std::vector<uint8_t>& base, const Measurement& base_measurement,
                                            Runner& runner, Clock::time_point deadline, TuneResult& result) {
  ScheduleSearchResult out;
  KILN_ASSIGN_OR_RETURN(Formed formed, state.Form(point));
  const hlo::Computation& entry = state.entry();
  std::vector<int64_t> root_kernel(entry.instruction_count(), -1);
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    for (int64_t r : formed.kernels[k].roots) root_kernel[r] = static_cast<int64_t>(k);
  }
  KILN_ASSIGN_OR_RETURN(fusion::KernelGraph graph, fusion::KernelDependencies(entry, formed.kernels, root_kernel));
  std::unordered_map<std::string, double> us_of;
  for (const KernelTime& k : base_measurement.kernels) us_of[k.name] = k.us;
  ScheduleProblem problem;
  std::vector<ScheduledKernel>& kernels = problem.kernels;
  kernels.resize(formed.kernels.size());
  double core_us = 0;
  for (size_t k = 0; k < formed.kernels.size(); ++k) {
    const fusion::Kernel& kernel = formed.kernels[k];
    auto it = us_of.find(std::string(entry.instructions()[kernel.roots.front()]->name()));
    kernels[k].us = it == us_of.end() ? 0 : it->second;
    kernels[k].on_links = RunsOnLinks(entry, kernel);
    kernels[k].before = std::move(graph.before[k]);
    kernels[k].reads = std::move(graph.reads[k]);
    kernels[k].defines = std::move(graph.defines[k]);
    if (!kernels[k].on_links) core_us += kernels[k].us;
  }
  problem.bytes = std::move(graph.bytes);
  problem.returned = std::move(graph.returned);
  // What the chip's HBM holds beside the parameters, with a tenth left for
  // what the model does not see (buffer placement, constants).
  if (const runtime::ChipSpec* chip = runtime::FindChip(state.options().chip)) {
    double parameters = 0;
    for (const hlo::Instruction* p : entry.parameters()) {
      parameters += static_cast<double>(fusion::ShapeBytes(p->shape()));
    }
    problem.memory_limit = std::max(0.0, 0.9 * (static_cast<double>(chip->hbm_bytes) - parameters));
  }
  out.exposed_us = std::max(0.0, base_measurement.device_us - core_us);
  std::vector<ScheduleOrder> orders = LatencyHidingOrders(problem);
  if (orders.empty()) {
    out.note = "no collective in the entry to hide";
    return out;
  }
  std::vector<int64_t> current(kernels.size());
  for (size_t k = 0; k < current.size(); ++k) current[k] = static_cast<int64_t>(k);
  const double current_simulated = ListScheduledUs(problem, current);
  double best_us = base_measurement.device_us;
  std::string tried;
  auto tell = [&](const ScheduleOrder& order, const std::string& what) {
    char head[160];
    std::snprintf(head, sizeof(head), "%s%s (list-scheduled %.0f us, the current order %.0f us): ",
                  tried.empty() ? "" : "; ", order.name.c_str(), order.simulated_us, current_simulated);
    tried += head + what;
  };
  std::vector<double> timed_simulations;
  for (const ScheduleOrder& order : orders) {
    if (!(order.simulated_us < current_simulated)) {
      tell(order, "hides nothing more");
      continue;
    }
    // An order list-scheduled as fast as one timed already runs as it does.
    if (std::any_of(timed_simulations.begin(), timed_simulations.end(),
                    [&](double us) { return std::abs(us - order.simulated_us) <= 1e-6 * us; })) {
      tell(order, "as fast as an order timed");
      continue;
    }
    timed_simulations.push_back(order.simulated_us);
    // The best order is timed even past the budget (one trial: the search
    // before it kept time for it, but evaluations may have taken it).
    if (out.orders_measured > 0 && Clock::now() > deadline) {
      out.note = "the budget ended before the order \"" + order.name + "\" was timed";
      break;
    }
    std::vector<std::vector<int64_t>> kernel_order;
    kernel_order.reserve(order.order.size());
    for (int64_t k : order.order) kernel_order.push_back(formed.kernels[k].instructions);
    Result<driver::CompileOutput> lowered = state.Lower(point, formed, bodies, kernel_order);
    ++result.trials;
    ++out.orders_measured;
    if (!lowered) {
      ++result.invalid_candidates;
      tell(order, "not lowered: " + lowered.error().ToString());
      continue;
    }
    auto start = Clock::now();
    Result<Measurement> m = runner.Measure(lowered->executable, /*strict_tiling=*/true);
    result.ms.timing += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!m || !m->ok()) {
      ++result.invalid_candidates;
      tell(order, m ? "not timed strictly" : "not timed: " + m.error().ToString());
      continue;
    }
    tell(order, "timed " + std::to_string(static_cast<int64_t>(m->device_us)) + " us");
    if (!(m->device_us < best_us)) continue;
    start = Clock::now();
    Result<DataflowCheck> same = SameDataflow(base, lowered->executable);
    result.ms.verify += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!same) {
      ++out.rejected;
      ++result.rejected_by_verification;
      tried += ", rejected: " + same.error().ToString();
      continue;
    }
    best_us = m->device_us;
    out.improved = true;
    out.memory_checked = same->memory_checked;
    out.kernel_order = std::move(kernel_order);
    out.order_name = order.name;
    out.executable = std::move(lowered->executable);
    out.measurement = *std::move(m);
  }
  std::string verdict = out.improved ? "kept \"" + out.order_name + "\"" : "no order ran faster";
  out.note = verdict + " (" + tried + ")" + (out.note.empty() ? "" : "; " + out.note);
  return out;
}

double RecordSchedule(TuningState& state, const Point& point, ScheduleSearchResult& schedule, Measurement& tuned,
                      TuneResult& result) {
  result.schedule_note = schedule.note;
  result.schedule_orders_measured = schedule.orders_measured;
  result.exposed_ici_us = schedule.exposed_us;
  if (!schedule.improved) return 0;
  const double before_us = result.tuned_us;
  if (!result.accepted) {
    Result<Formed> formed = state.Form(point);
    if (formed) result.edits = state.Edits(point, *formed);
    result.edits.body_flips.clear();
    result.verification = "same dataflow";
    result.tile_changes = static_cast<int64_t>(result.edits.tiles.size());
  }
  result.edits.kernel_order = std::move(schedule.kernel_order);
  result.accepted = true;
  tuned = std::move(schedule.measurement);
  result.tuned_us = tuned.device_us;
  result.tuned_executable = std::move(schedule.executable);
  result.schedule_order = schedule.order_name;
  const double saved_us = std::max(0.0, before_us - result.tuned_us);
  result.decision += (result.decision.empty() ? "" : "; ") + std::string("schedule: kernels reordered (") +
                     schedule.order_name + "), " + std::to_string(static_cast<int64_t>(saved_us)) +
                     " us faster, dataflow the same" +
                     (schedule.memory_checked ? std::string()
                                              : std::string(" (values compared buffer by buffer: the executable's "
                                                            "offsets do not describe its memory)"));
  return saved_us;
}

}  // namespace kiln::autotune::internal
