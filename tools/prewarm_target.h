// Where `kiln prewarm` puts its entries: a cache store file (StoreTarget,
// prewarm_store_target.h) or a running `kiln serve` (ServerTarget,
// prewarm_server_target.h). Implementations are thread-safe: the workers
// call them concurrently, one job per call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "tools/prewarm_jobs.h"

namespace kiln::tools {

struct JobOutcome {
  bool compiled = false;  // false: it was stored by someone else meanwhile
  double compile_seconds = 0;
  uint64_t bytes = 0;     // executable bytes of the entry (raw)
  std::optional<uint64_t> stored_bytes;  // as the store keeps them (compressed), when the target says
  bool tuned = false;     // with --tune: a tuned executable was stored
  std::string tune_note;  // with --tune: what tuning did
};

class PrewarmTarget {
 public:
  virtual ~PrewarmTarget() = default;
  // Whether the entry for `job` is stored already (nothing is compiled).
  virtual Result<bool> Contains(const CompileJob& job) = 0;
  // Compiles and stores the entry. An error names why this job failed
  // (the module does not compile, the store refused it); the run goes on.
  virtual Result<JobOutcome> Make(const CompileJob& job) = 0;
};

}  // namespace kiln::tools
