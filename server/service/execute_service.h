// ExecuteService: runs of stored executables on the device pool.
//
// Program loads a stored entry's executable once (verified, checked to be
// the key's own program: never trust bytes another process wrote) and keeps
// it ready (program_cache.h). Execute admits a run: it is queued for a chip
// of the executable's kind, or for every chip of its slice, with a deadline,
// the host memory it needs (run_limits.h) and the caller's cancellation;
// background tuning gives way while it is queued or running (tune_gate.h).
//
// `done` runs exactly once: on the caller's thread when the pool refuses the
// run (run_limits.h's RefusedRunError), else on a pool thread, with the
// result or EndedRunError. Counts runs, failures and device time in the
// metrics. Thread-safe; the pool must stop before the service is destroyed
// (its callbacks use it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/cache_store.h"
#include "compiler/hlo/literal.h"
#include "runtime/pool/device_pool.h"
#include "runtime/timing/timed_execution.h"
#include "server/service/program_cache.h"
#include "server/service/service_metrics.h"
#include "server/service/tune_gate.h"

namespace kiln::service {

// One run, as a front door asks for it.
struct ExecuteCall {
  cache::EntryId id;
  std::shared_ptr<const ReadyProgram> program;  // Program(id)
  std::vector<hlo::Literal> inputs;             // one per parameter (global shapes for a slice)
  bool json_answer = false;  // the answer is JSON (host memory: about 32 bytes per element)
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();  // the deadline counts from here
  std::function<bool()> cancelled = nullptr;  // the caller left; null: never
};

// A run that completed.
struct ExecuteResult {
  std::string key;       // hex
  std::string chip;      // the executable's chip kind
  std::string device;    // where it ran: "v5e:0" (a slice's first chip)
  std::string topology;  // the slice's shape ("2x4"); empty for one chip
  int64_t chips = 1;
  runtime::timing::TimedExecution run;  // the result and the device profile
  double queue_ms = 0;
  double wall_ms = 0;
};

using ExecuteDone = std::move_only_function<void(Result<ExecuteResult>)>;

struct ExecuteServiceOptions {
  size_t program_cache_entries = 64;
  // Evaluator work units (about a nanosecond each) per kernel of a run.
  int64_t step_budget = int64_t{1} << 32;
};

class ExecuteService {
 public:
  ExecuteService(cache::CacheStore& store, runtime::pool::DevicePool& pool, TuneGate& gate, ServiceMetrics& metrics,
                 ExecuteServiceOptions options);
  ExecuteService(const ExecuteService&) = delete;
  ExecuteService& operator=(const ExecuteService&) = delete;

  // The stored entry's program, loaded: 404 when the store has no entry
  // for `id`, 500 when its bytes do not load, data loss when they hold
  // another key's or chip's program.
  Result<std::shared_ptr<const ReadyProgram>> Program(const cache::EntryId& id);

  void Execute(ExecuteCall call, ExecuteDone done);

  // A request its front door refused before it became a call, and one
  // whose completed run it could not answer: counted as failed executes.
  void Refused();
  void FailedToAnswer();

  // Drops loaded programs whose entry changed in the store.
  void Forget(const cache::EntryId& id) { programs_.Erase(id); }
  void ForgetAll() { programs_.Clear(); }

  // "v5e:1" for the pool's chip `pool_index`: its kind and place among
  // the chips of that kind.
  std::string DeviceName(int pool_index) const;

 private:
  cache::CacheStore& store_;
  runtime::pool::DevicePool& pool_;
  TuneGate& gate_;
  ServiceMetrics& metrics_;
  const ExecuteServiceOptions options_;
  ProgramCache programs_;
  std::vector<runtime::pool::ChipStatus> chips_;  // the pool's chips (kind and place), fixed at start
};

}  // namespace kiln::service
