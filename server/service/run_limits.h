// The limits of one run, and the errors for runs the pool ended early or
// refused.
//
// A run needs host memory: RunHostBytes estimates it before the run is
// admitted against the pool's budget. A run that ends without a result
// gets an error saying how long it queued and ran and where it stopped;
// the statuses named below are the API's (server/http/error_status.h).
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "runtime/pool/device_pool.h"
#include "server/service/program_cache.h"

namespace kiln::service {

// Host bytes a run of `program` needs at least: its buffers at their peak
// (the executable's peak HBM: host literals take what the chip's buffers
// take), the arguments' flattened copy, the largest value any kernel makes
// inside, and the answer (the result's bytes again for safetensors; about
// 32 bytes per element for JSON).
uint64_t RunHostBytes(const ReadyProgram& program, bool json_answer);
// All of that but the answer, fixed by the program: computed once when it
// is loaded (ReadyProgram::run_host_bytes).
uint64_t ProgramRunHostBytes(const runtime::LoadedProgram& program, std::span<const hlo::Shape> parameters);

// What the pool knew of a run it ended without a result.
struct EndedRun {
  std::string key = {};
  std::string device = {};                 // "v5e:0"; empty when it never ran
  std::chrono::milliseconds timeout = {};  // the run's time limit
  double queued_seconds = 0;
  double run_seconds = 0;
  Error error = {};  // the pool's or the run's error
};

// The answer for a run that ended `end` (not kCompleted): 504
// deadline_exceeded (how long it queued and ran, where it stopped),
// 499 client_closed_request, 503 draining or host_memory_busy (with
// Retry-After), 422 execution_failed.
Error EndedRunError(runtime::pool::JobEnd end, const EndedRun& run);

// The answer for a run the pool refused to queue: 503 pool_saturated or
// draining (with Retry-After), 413 too_large_to_run (with the figures),
// 409 chip_not_in_pool.
Error RefusedRunError(const Error& error, const std::string& key, const std::string& kind,
                      const std::string& pool_spec);

}  // namespace kiln::service
