// StoreRecords: the autotuner's RecordStore (compiler/autotune/
// record_store.h) over the cache store's tuning records. Borrows the
// store; not thread-safe (counts what it added).
#pragma once

#include "cache/cache_store.h"
#include "compiler/autotune/record_store.h"

namespace kiln::service {

class StoreRecords final : public autotune::RecordStore {
 public:
  StoreRecords(cache::CacheStore& store, std::string tenant) : store_(store), tenant_(std::move(tenant)) {}

  Status Add(const autotune::TuningTrial& trial) override;
  Result<std::optional<autotune::TuningTrial>> Best(const std::string& workload_key,
                                                    const std::string& chip) override;
  int64_t added() const { return added_; }

 private:
  cache::CacheStore& store_;
  std::string tenant_;  // records are read and written as this tenant's
  int64_t added_ = 0;
};

}  // namespace kiln::service
