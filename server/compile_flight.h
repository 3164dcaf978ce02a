// Internal to the compile routes (routes_compile.cc, shared_compile.cc):
// what one compile flight answers its waiters, and a request's stage times.
#pragma once

#include <chrono>
#include <optional>

#include "base/status.h"
#include "server/compiled_entry.h"
#include "server/kiln_service.h"

namespace kiln::server {

struct KilnService::CompileTimings {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double parse_ms = 0;
  double fingerprint_ms = 0;
  double lookup_ms = 0;
  double compile_ms = 0;
  double store_ms = 0;
};

struct KilnService::FlightOutcome {
  std::optional<Error> error;
  EntryView entry;
  std::optional<Error> not_stored;  // compiled, but the store could not keep it (why)
  bool compiled = false;  // false: the leader found it stored after all
  bool from_shared = false;    // fetched from the shared tier
  bool shared_waited = false;  // ... after waiting on another server's compile
  double compile_ms = 0;
  double store_ms = 0;
};

}  // namespace kiln::server
