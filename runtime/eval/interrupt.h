// Interrupt: tells a running evaluation to stop early.
//
// Whoever runs an evaluation (the device pool, `kiln run`) owns an Interrupt
// and lends it through EvalOptions::interrupt; another thread calls Stop when
// the run's deadline passes, its client goes away or the server shuts down.
// The evaluator reads the flag once per instruction, kernel and loop trip
// (one relaxed atomic load), never per element, and then ends the run with
// an error that names the reason and the innermost while loop it was in. A
// single kernel call that is already running (one big dot) is not cut short.
//
// Thread-safe: Stop and reason may be called from any thread. The first
// reason given wins; later calls change nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

enum class StopReason : uint8_t {
  kNone = 0,
  kCancelled,  // the client went away or withdrew the request
  kDeadline,   // the run's deadline passed
  kShutdown,   // the server is shutting down
};

// "cancelled", "deadline exceeded", "server shutting down" ("" for kNone).
constexpr std::string_view StopReasonText(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "";
    case StopReason::kCancelled: return "cancelled";
    case StopReason::kDeadline: return "deadline exceeded";
    case StopReason::kShutdown: return "server shutting down";
  }
  return "";
}

// The error code of a run stopped for `reason`: cancelled, deadline
// exceeded, or unavailable for a shutdown.
constexpr ErrorCode StopErrorCode(StopReason reason) {
  switch (reason) {
    case StopReason::kCancelled: return ErrorCode::kCancelled;
    case StopReason::kDeadline: return ErrorCode::kDeadlineExceeded;
    case StopReason::kShutdown: return ErrorCode::kUnavailable;
    case StopReason::kNone: break;
  }
  return ErrorCode::kInternal;
}

class Interrupt {
 public:
  // Asks the evaluation to stop for `reason` (kNone is ignored).
  void Stop(StopReason reason) {
    StopReason none = StopReason::kNone;
    if (reason != StopReason::kNone) reason_.compare_exchange_strong(none, reason, std::memory_order_relaxed);
  }
  StopReason reason() const { return reason_.load(std::memory_order_relaxed); }
  bool stopped() const { return reason() != StopReason::kNone; }

 private:
  std::atomic<StopReason> reason_{StopReason::kNone};
};

}  // namespace kiln::runtime
