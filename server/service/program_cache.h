// Loaded executables ready to run, by entry, least recently used first out.
//
// Loading an executable parses every kernel's HLO and prices the kernels
// whose time is fixed; the execute route keeps the result here so repeated
// runs of a hot entry skip both. A ReadyProgram is immutable and may run
// concurrently (LoadedProgram and ProgramTimer allow it); the cache hands
// out shared pointers, so an evicted program lives until its last run ends.
// Thread-safe: one mutex around the map, never held while loading.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "cache/entry.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/program/loaded_program.h"
#include "runtime/spmd/slice_execution.h"
#include "runtime/timing/timing_simulator.h"

namespace kiln::service {

struct ReadyProgram {
  std::unique_ptr<runtime::LoadedProgram> program;
  std::unique_ptr<runtime::timing::ProgramTimer> timer;  // borrows *program
  const runtime::ChipSpec* chip = nullptr;                 // the executable's chip (static table)
  std::vector<hlo::Shape> parameter_shapes;  // what the caller sends (global ones for a partitioned module)
  // The pool slice a program for a topology runs on ({2, 4}); empty: one chip.
  std::vector<int> topology;
  runtime::SliceShape slice;  // its replicas x partitions
  uint64_t run_host_bytes = 0;  // host memory a run needs besides its answer (execute_limits.h)
  // Whether the evaluator can compute every kernel (runtime::CheckEvaluable):
  // an execute is refused up front when not; timing is unaffected.
  Status evaluable = Ok();

  ~ReadyProgram() { timer.reset(); }  // the timer before the program it borrows
};

// Verifies and loads `executable` (never trusted) for its own chip.
Result<std::shared_ptr<const ReadyProgram>> LoadReadyProgram(std::span<const uint8_t> executable);

class ProgramCache {
 public:
  explicit ProgramCache(size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<const ReadyProgram> Find(const cache::EntryId& id);
  void Insert(const cache::EntryId& id, std::shared_ptr<const ReadyProgram> program);
  void Erase(const cache::EntryId& id);
  void Clear();
  size_t size() const;

 private:
  using Item = std::pair<cache::EntryId, std::shared_ptr<const ReadyProgram>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Item> order_;  // most recent first; guarded by mu_
  std::unordered_map<cache::EntryId, std::list<Item>::iterator, cache::EntryIdHash> index_;  // guarded by mu_
};

}  // namespace kiln::service
