#include "runtime/timing/step_schedule.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
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
  Schedule out;
  out.starts.assign(items.size(), 0);
  std::vector<double> finish(items.size(), kNotYet);
  // When item i's inputs are all ready; kNotYet while one is unscheduled.
  auto ready = [&](size_t i) {
    double t = 0;
    for (size_t p : items[i].after) t = std::max(t, finish[p]);
    return t;
  };
  double core = 0, links = 0;
  size_t next_link = 0;  // collectives keep program order on the links
  for (size_t left = items.size(); left > 0; --left) {
    while (next_link < items.size() && (!items[next_link].on_links || finish[next_link] != kNotYet)) ++next_link;
    size_t best = items.size();
    double best_start = kNotYet;
    if (next_link < items.size()) {
      best = next_link;
      best_start = std::max(links, ready(next_link));
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].on_links || finish[i] != kNotYet) continue;
      const double start = std::max(core, ready(i));
      if (start < best_start || (start == best_start && i < best)) {
        best = i;
        best_start = start;
      }
    }
    if (best == items.size() || best_start == kNotYet) break;  // unreachable when `after` points back
    double& engine = items[best].on_links ? links : core;
    engine = best_start + items[best].seconds;
    finish[best] = engine;
    out.starts[best] = best_start;
  }
  out.seconds = std::max(core, links);
  return out;
}

double OverlappedSeconds(std::span<const TimedStep> steps) {
  std::vector<std::vector<size_t>> producers = ProducerSteps(steps);
  std::vector<ScheduleItem> items(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    items[i] = {steps[i].seconds, steps[i].on_links, std::move(producers[i])};
  }
  return ListSchedule(items).seconds;
}

}  // namespace kiln::runtime::timing
