// Storing what the autotuner found, as `kiln tune --db` and `kiln prewarm
// --tune` do: the tuned executable under the heuristic compile's key (plan
// tuned, tenant default), swapped in for a stored entry in one transaction
// (CacheStore::ReplaceWithTuned) or put where none is stored. A tuned
// entry already stored and as fast is not a failure (already_tuned).
// Thread-safe as the store is.
#pragma once

#include <string>
#include <string_view>

#include "cache/cache_store.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "tools/tune_report.h"

namespace kiln::tools {

// Stores `result` when accepted and says what happened; `records` is how
// many tuning records the tuning kept. `options` are the tuned compile's
// (normalized); `source_text` the module text tuned, kept beside the entry
// (for explain, and bundles exported from the store).
StoreOutcome StoreTuneResult(cache::CacheStore& store, const autotune::TuneResult& result,
                             const driver::CompileOptions& options, int64_t records, std::string_view source_text);

// The tune options for a time budget ("30s", "500ms", "2m"; at most 24h).
Result<autotune::TuneOptions> TuneOptionsForBudget(const std::string& budget, uint64_t seed = 1);

}  // namespace kiln::tools
