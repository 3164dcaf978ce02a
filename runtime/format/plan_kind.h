// PlanKind: how an executable's fusion/tiling plan was chosen. One
// vocabulary for the compiler (which plan to make), the executable (its
// `plan` field) and the cache (what each entry was compiled with), kept with
// the format because every one of them already depends on it. Pure values and
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

enum class PlanKind : uint8_t {
  kNone,       // every kernel-forming instruction is its own kernel
  kHeuristic,  // XLA-like fusion heuristic (default)
  kGiven,      // keep the `fusion` instructions XLA already made
  kTuned,      // chosen by measurement (the autotuner)
};

// "none", "heuristic", "given", "tuned": the names in keys, executables,
// the store and the HTTP API. Never change one: keys hash them.
std::string_view PlanKindName(PlanKind kind);

// The kind named `name` (one of the four names); invalid_argument otherwise.
Result<PlanKind> ParsePlanKind(std::string_view name);

}  // namespace kiln::runtime
