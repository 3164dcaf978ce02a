// BundleTransfer: a store's entries and tuning records to and from bundles
// (bundle.h, the file `kiln inspect export` writes and `import` reads).
//
// Export reads each servable entry the selection picks and checks it like a
// hit (a corrupt one is quarantined and counted in report.skipped_corrupt,
// not exported); no hit is counted. Import files entries through the store's
// write path (store_writer.h): an entry absent (or quarantined) here is
// stored with its metadata and creation time (hits start at 0), its bundle
// frame kept as it is; one stored with the same checksum is counted
// present; one stored with other bytes is kept and counted a conflict. A
// record identical to a stored one is counted present. A bundle's
// request-body hashes are never written (bundle.h). Writes fail like the
// store's other writes (kFull, kReadOnly). Owned by the CacheStore
// (CacheStore::bundles()); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/status.h"
#include "cache/bundle.h"

namespace kiln::cache {

class BundleReader;  // bundle_reader.h
class CacheStore;    // cache_store.h
struct PreparedEntry;  // store_rows.h

// How an import files what it reads.
struct ImportOptions {
  // Every entry and record goes to this tenant instead of the one it names
  // (`kiln inspect import --tenant`); must be a valid name.
  std::optional<std::string> tenant = std::nullopt;
  // A streamed import commits after about this many bytes (raw and
  // compressed) of entries, so a large bundle never holds the store's write
  // lock for long.
  uint64_t batch_bytes = uint64_t{64} << 20;
};

class BundleTransfer {
 public:
  explicit BundleTransfer(CacheStore& store) : store_(store) {}

  // The selected entries go to `sink` one at a time (oldest row first),
  // then the records, oldest first.
  Status Export(const BundleSelection& selection, const BundleSink& sink, BundleReport& report);
  // The same, collected in memory (schema version: CurrentSchemaVersion()).
  Result<Bundle> Export(const BundleSelection& selection, BundleReport& report);

  // Writes a decoded (so already verified) bundle in one transaction:
  // nothing is written when it fails.
  Result<BundleReport> Import(const Bundle& bundle, const ImportOptions& options = {});
  // The same, streamed from `reader` in transactions of
  // options.batch_bytes: memory holds one batch. An error (a damaged item,
  // a full disk) stops it, keeping the batches already committed, and says
  // how many entries came in before; callers that want all or nothing read
  // the bundle through once first (BundleReader).
  Result<BundleReport> Import(BundleReader& reader, const ImportOptions& options = {});

 private:
  // An imported entry ready to write, and one transaction of an import
  // (its counts added to `report`).
  Result<PreparedEntry> Prepare(const BundleEntry& entry, const ImportOptions& options);
  Status ImportBatch(std::span<const BundleEntry> entries, std::span<const TuningRecord> records,
                     const ImportOptions& options, BundleReport& report);

  CacheStore& store_;
};

}  // namespace kiln::cache
