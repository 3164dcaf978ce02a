#include "runtime/timing/step_schedule.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace kiln::runtime::timing {

double OverlappedSeconds(std::span<const TimedStep> steps) {
  std::unordered_map<const hlo::Instruction*, double> done;  // finish time of each step and seen-through value
  // When `value` is ready: its step's finish, or (for an instruction that
  // is no step) when all of its own operands are ready.
  auto ready = [&done](const hlo::Instruction* value) {
    std::vector<std::pair<const hlo::Instruction*, size_t>> stack = {{value, 0}};
    std::vector<double> latest = {0};
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == 0) {
        if (auto it = done.find(v); it != done.end()) {
          const double t = it->second;
          stack.pop_back();
          latest.pop_back();
          if (latest.empty()) return t;
          latest.back() = std::max(latest.back(), t);
          continue;
        }
      }
      if (next < v->operands().size()) {
        const hlo::Instruction* operand = v->operand(static_cast<int64_t>(next++));
        stack.emplace_back(operand, 0);
        latest.push_back(0);
        continue;
      }
      const double t = latest.back();
      done.emplace(v, t);  // seen through once
      stack.pop_back();
      latest.pop_back();
      if (latest.empty()) return t;
      latest.back() = std::max(latest.back(), t);
    }
    return 0.0;
  };
  double core = 0, links = 0;
  for (const TimedStep& step : steps) {
    double start = 0;
    for (const hlo::Instruction* operand : step.instruction->operands()) start = std::max(start, ready(operand));
    double& engine = step.on_links ? links : core;
    start = std::max(start, engine);
    engine = start + step.seconds;
    done[step.instruction] = engine;
  }
  return std::max(core, links);
}

}  // namespace kiln::runtime::timing
