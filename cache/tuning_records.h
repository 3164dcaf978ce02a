// TuningRecords: the autotuner's measurements, kept in the store (the
// tuning_records table) so a later tuning of the same subgraph starts from
// the best plan found so far.
//
// A record belongs to one tenant (namespace) and is never returned to
// another, and is reused only by the compiler that measured it. Writes go
// through the store's write path (store_writer.h) and fail like its other
// writes on a full disk or a read-only store (StorageProblemOf); a delete
// uses the store's reserve on a full disk. Owned by the CacheStore
// (CacheStore::tuning_records()); thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cache/entry.h"
#include "cache/reader_pool.h"
#include "cache/sqlite_connection.h"
#include "cache/store_writer.h"

namespace kiln::cache {

// Records come back newest first; each field given must match.
struct TuningRecordFilter {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> workload_key = std::nullopt;
  std::optional<std::string> chip = std::nullopt;
  std::optional<uint32_t> compiler_version = std::nullopt;
  int limit = 1000;
};

class TuningRecords {
 public:
  TuningRecords(StoreWriter& writer, ReaderPool& readers, UnixClock clock)
      : writer_(writer), readers_(readers), clock_(std::move(clock)) {}

  // Stores one record. Fails on an empty tenant, workload key or chip, or a
  // record with both or neither of a measured time and an error.
  Status Add(TuningRecord record);
  Result<std::vector<TuningRecord>> List(const TuningRecordFilter& filter);
  // The fastest successful record of `tenant` for the subgraph on `chip`
  // measured by this compiler (kCompilerFormatVersion); empty when there is
  // none. Never another tenant's record, never an older compiler's.
  Result<std::optional<TuningRecord>> Best(const std::string& tenant, const std::string& workload_key,
                                           const std::string& chip);
  // Record counts by tenant (for metrics; '' holds the records from before
  // records had tenants), in tenant order.
  Result<std::map<std::string, int64_t>> CountsByTenant();
  // Deletes every record of `tenant`; returns how many there were.
  Result<int64_t> DeleteTenant(const std::string& tenant);

  // Inside one of the store's write transactions (a bundle import): stores
  // `record` as `tenant`'s unless an identical one is there; true when it
  // was added.
  static Result<bool> AddUnlessPresent(Connection& writer, const TuningRecord& record, const std::string& tenant);

 private:
  StoreWriter& writer_;
  ReaderPool& readers_;
  const UnixClock clock_;
};

}  // namespace kiln::cache
