#include "server/service/program_cache.h"

#include "runtime/eval/evaluator.h"
#include "runtime/format/parameter_shapes.h"
#include "runtime/spmd/global_arguments.h"
#include "runtime/timing/timed_slice_execution.h"
#include "server/service/executable_signature.h"
#include "server/service/run_limits.h"

namespace kiln::service {

Result<std::shared_ptr<const ReadyProgram>> LoadReadyProgram(std::span<const uint8_t> executable) {
  auto ready = std::make_shared<ReadyProgram>();
  KILN_ASSIGN_OR_RETURN(ready->program, runtime::LoadedProgram::FromBytes(executable));
  const runtime::Program& program = ready->program->program();
  ready->chip = runtime::FindChip(program.chip);
  if (ready->chip == nullptr) return DataLossError("executable targets unknown chip '" + program.chip + "'");
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Shape> own, runtime::ProgramParameterShapes(program));
  KILN_ASSIGN_OR_RETURN(runtime::timing::TimingOptions timing, runtime::timing::ProgramSliceTiming(program, *ready->chip));
  // Every chip of a slice holds its own copy of the run's values.
  ready->run_host_bytes = ProgramRunHostBytes(*ready->program, own) * static_cast<uint64_t>(timing.chips());
  KILN_ASSIGN_OR_RETURN(ready->parameter_shapes, runtime::CallerParameterShapes(program, std::move(own)));
  if (timing.topology) {
    for (int64_t d : timing.topology->dims) ready->topology.push_back(static_cast<int>(d));
    ready->slice = runtime::timing::ProgramSliceShape(program, timing.chips());
  }
  KILN_ASSIGN_OR_RETURN(ready->timer, runtime::timing::ProgramTimer::Create(*ready->program, *ready->chip, timing));
  for (size_t k = 0; k < program.kernels.size() && ready->evaluable; ++k) {
    ready->evaluable = runtime::CheckEvaluable(ready->program->kernel_module(k));
  }
  return std::shared_ptr<const ReadyProgram>(std::move(ready));
}

std::shared_ptr<const ReadyProgram> ProgramCache::Find(const cache::EntryId& id) {
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

void ProgramCache::Insert(const cache::EntryId& id, std::shared_ptr<const ReadyProgram> program) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  if (auto it = index_.find(id); it != index_.end()) {
    it->second->second = std::move(program);
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.emplace_front(id, std::move(program));
  index_.emplace(id, order_.begin());
  while (order_.size() > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

void ProgramCache::Erase(const cache::EntryId& id) {
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return;
  order_.erase(it->second);
  index_.erase(it);
}

void ProgramCache::Clear() {
  std::lock_guard lock(mu_);
  order_.clear();
  index_.clear();
}

size_t ProgramCache::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

}  // namespace kiln::service
