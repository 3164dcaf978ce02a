#include "runtime/timing/step_schedule.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::runtime::timing {
namespace {

// For each step, the steps that produce its operands, seen through
// instructions that are no step (parameters produce nothing).
std::vector<std::vector<size_t>> ProducerSteps(std::span<const TimedStep> steps) {
  std::unordered_map<const hlo::Instruction*, size_t> step_of;
  for (size_t i = 0; i < steps.size(); ++i) step_of.emplace(steps[i].instruction, i);
  // The producer steps of each seen-through value, found once.
  std::unordered_map<const hlo::Instruction*, std::vector<size_t>> seen;
  auto producers_of = [&](const hlo::Instruction* value) -> std::vector<size_t> {
    if (auto s = step_of.find(value); s != step_of.end()) return {s->second};
    std::vector<const hlo::Instruction*> stack = {value};
    while (!stack.empty()) {
      const hlo::Instruction* v = stack.back();
      if (seen.contains(v)) {
        stack.pop_back();
        continue;
      }
      bool operands_known = true;
      for (const hlo::Instruction* op : v->operands()) {
        if (!step_of.contains(op) && !seen.contains(op)) {
          stack.push_back(op);
          operands_known = false;
        }
      }
      if (!operands_known) continue;
      std::vector<size_t> found;
      for (const hlo::Instruction* op : v->operands()) {
        if (auto s = step_of.find(op); s != step_of.end()) {
          found.push_back(s->second);
        } else {
          const std::vector<size_t>& more = seen.at(op);
          found.insert(found.end(), more.begin(), more.end());
        }
      }
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      seen.emplace(v, std::move(found));
      stack.pop_back();
    }
    return seen.at(value);
  };
  std::vector<std::vector<size_t>> producers(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const hlo::Instruction* operand : steps[i].instruction->operands()) {
      for (size_t p : producers_of(operand)) producers[i].push_back(p);
    }
  }
  return producers;
}

}  // namespace

Schedule ListSchedule(std::span<const ScheduleItem> items) {
  constexpr double kNotYet = std::numeric_limits<double>::infinity();
  const size_t n = items.size();
  Schedule out;
  out.starts.assign(n, 0);
  // waiting[i]: producers of item i not yet scheduled; ready[i]: when the
  // scheduled ones have finished.
  std::vector<size_t> waiting(n, 0);
  std::vector<double> ready(n, 0);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t p : items[i].after) {
      if (p >= n) continue;
      users[p].push_back(i);
      ++waiting[i];
    }
  }
  // Core items whose producers are all scheduled: those ready by the core's
  // time by program order, the others by when they are ready.
  std::set<size_t> startable;
  using Later = std::pair<double, size_t>;
  std::priority_queue<Later, std::vector<Later>, std::greater<Later>> later;
  double core = 0, links = 0;
  auto offer = [&](size_t i) {
    if (items[i].on_links) return;
    if (ready[i] <= core) {
      startable.insert(i);
    } else {
      later.emplace(ready[i], i);
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) offer(i);
  }
  std::vector<char> done(n, 0);
  size_t next_link = 0;  // collectives keep program order on the links
  for (size_t left = n; left > 0; --left) {
    while (next_link < n && (!items[next_link].on_links || done[next_link])) ++next_link;
    size_t best = n;
    double best_start = kNotYet;
    if (next_link < n && waiting[next_link] == 0) {
      best = next_link;
      best_start = std::max(links, ready[next_link]);
    }
    // The core's choice: the first in program order of those ready by its
    // time, else the one ready soonest.
    if (!startable.empty()) {
      const size_t i = *startable.begin();
      if (core < best_start || (core == best_start && i < best)) {
        best = i;
        best_start = core;
      }
    } else if (!later.empty()) {
      const auto [at, i] = later.top();
      if (at < best_start || (at == best_start && i < best)) {
        best = i;
        best_start = at;
      }
    }
    if (best == n) break;  // unreachable when `after` points back
    if (items[best].on_links) {
      links = best_start + items[best].seconds;
    } else {
      if (!startable.empty() && *startable.begin() == best) {
        startable.erase(startable.begin());
      } else {
        later.pop();
      }
      core = best_start + items[best].seconds;
      while (!later.empty() && later.top().first <= core) {
        startable.insert(later.top().second);
        later.pop();
      }
    }
    done[best] = 1;
    out.starts[best] = best_start;
    const double finish = best_start + items[best].seconds;
    for (size_t u : users[best]) {
      ready[u] = std::max(ready[u], finish);
      if (--waiting[u] == 0) offer(u);
    }
  }
  out.seconds = std::max(core, links);
  return out;
}

double OverlappedSeconds(std::span<const TimedStep> steps) {
  std::vector<std::vector<size_t>> producers = ProducerSteps(steps);
  std::vector<ScheduleItem> items(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    items[i] = {steps[i].seconds, steps[i].on_links, producers[i]};
  }
  return ListSchedule(items).seconds;
}

}  // namespace kiln::runtime::timing
