// The body of POST /v1/tune (the TuneRequest schema):
//
//   {"hlo": "HloModule ...", "key": "<32 hex>", "chip": "v5e",
//    "options": {"scoped_vmem_bytes": 0}, "max_trials": 64,
//    "time_budget_s": 60, "seed": 1}
//
// `hlo` is the module to tune; the store keeps executables, not modules, so
// a new job needs it. `key`, optional beside it, must be the module's key;
// alone it names the entry's queued or running job. Options as for a
// compile, except that the plan is heuristic (tuning starts there). The
// budget: max_trials and/or time_budget_s, each above zero; neither gives
// 64 trials within 60 s; autotune::CheckBudget refuses absurd ones.
//
// Errors are 400 with a reason: invalid_json (not an object, unknown or
// mistyped field, neither hlo nor key), invalid_key, unknown_chip,
// invalid_options, invalid_budget. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::api {

inline constexpr int64_t kDefaultTuneTrials = 64;
inline constexpr double kDefaultTuneSeconds = 60;

struct TuneRequest {
  std::optional<std::string> hlo;
  std::optional<hlo::Hash128> key;
  driver::CompileOptions options;  // chip v5e unless given; plan heuristic
  autotune::TuneOptions budget;
};

Result<TuneRequest> ParseTuneRequest(std::string_view body);

}  // namespace kiln::api
