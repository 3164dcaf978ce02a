// What one `kiln prewarm` run did, and how it is shown: a summary table
// for people and one JSON object with --json. Plain data; the command
// fills it from one thread after the workers are done.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/dump_walker.h"
#include "tools/prewarm_jobs.h"

namespace kiln::tools {

struct PrewarmReport {
  bool dry_run = false;
  std::string target;             // "--db kiln.db" or "--server http://..."
  std::vector<std::string> chips;
  int64_t files = 0;              // files read
  int64_t found = 0;              // modules found in them
  int64_t entries = 0;            // modules x chips that keyed
  int64_t duplicates = 0;         // entries another module already asked for
  int64_t cached = 0;             // stored before (or meanwhile)
  int64_t compiled = 0;           // made by this run (with --dry-run: would be)
  int64_t tuned = 0;              // with --tune: tuned executables stored
  std::vector<SkippedPath> skipped;
  std::vector<JobFailure> failures;
  std::vector<std::string> would_compile;  // --dry-run: "KEY CHIP ORIGIN"
  std::vector<std::string> tune_notes;     // --tune: "ORIGIN: note"
  double compile_seconds = 0;     // summed over the compiles
  double seconds = 0;             // wall time of the run
  uint64_t executable_bytes = 0;  // raw executable bytes of the compiled entries
  // As the store keeps them (zstd, what /v1/stats' stored_bytes counts);
  // unknown (nullopt) when the target does not say (--server).
  std::optional<uint64_t> stored_bytes;
};

// Skip reasons with their counts, most frequent first.
std::vector<std::pair<std::string, int64_t>> SkipCounts(const std::vector<SkippedPath>& skipped);

std::string PrewarmTable(const PrewarmReport& report);
nlohmann::json PrewarmJson(const PrewarmReport& report);

}  // namespace kiln::tools
