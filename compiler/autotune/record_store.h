// RecordStore: where the autotuner keeps what it measured, so a later
// tuning of a module that contains an already-tuned kernel starts from its
// best tile ("transfer"). server/service/tune_records.h implements it over the
// cache store's tuning records (cache/cache_store.h); tests use a map.
//
// Records are keyed by a workload key (kernel_key.h: the kernel's subgraph,
// shapes included) and the chip. `plan` is the tuner's own text (a tile,
// tile_record.h) and opaque to the store. Not thread-safe unless an
// implementation says so; errors are values and never stop a tuning.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace kiln::autotune {

struct TuningTrial {
  std::string workload_key;
  std::string chip;
  std::string plan;
  std::optional<double> measured_us;  // absent when the trial failed
  std::optional<std::string> error;
};

class RecordStore {
 public:
  virtual ~RecordStore() = default;
  virtual Status Add(const TuningTrial& trial) = 0;
  // The fastest successful record of `workload_key` on `chip`, if any.
  virtual Result<std::optional<TuningTrial>> Best(const std::string& workload_key, const std::string& chip) = 0;
};

}  // namespace kiln::autotune
