// How `kiln tune` shows a TuneResult: one JSON object, or a table of the
// tuned plan's kernels next to the heuristic's and one summary line.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/autotune/tuner.h"

namespace kiln::tools {

struct StoreOutcome {
  bool requested = false;  // --db given
  bool stored = false;     // the tuned executable is in the store
  bool already_tuned = false;  // a tuned entry at least as fast was there
  std::string note;        // why not, or what was replaced
  int64_t records = 0;     // tuning records written
};

nlohmann::json TuneJson(const autotune::TuneResult& result, const StoreOutcome& store);

// At most `max_rows` kernels, the slowest under the heuristic first, then
// a line saying how many were left out; then the summary line.
std::string TuneTable(const autotune::TuneResult& result, const StoreOutcome& store, size_t max_rows = 40);

}  // namespace kiln::tools
