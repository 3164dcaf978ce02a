// Cache bundles: one self-describing file holding cache entries and tuning
// records, to move a cache between machines (`kiln inspect export/import`).
//
// Why a format of our own rather than an SQLite file: a bundle is read
// from untrusted places (copied between machines, half-downloaded), and
// import must name exactly what is wrong before it writes anything. A flat
// stream of checksummed, length-prefixed items is read start to end by a
// reader that bounds-checks every field, so any truncation or flipped bit
// is refused with the item it hit; an SQLite file would need its own
// integrity check and a schema of its own to version.
//
// Layout (integers little-endian, strings as u32 length + bytes):
//   header:  "KILNBNDL" | u32 bundle format | u32 compiler format
//            (kCompilerFormatVersion) | u32 store schema version
//   items:   u8 kind | u64 payload length | payload | u64 XXH3-64(payload)
//            kind 1: an entry (identity, metadata, key components,
//              request-body hashes, XXH3-64 of the raw executable, and the
//              executable zstd-compressed without a dictionary; from format
//              2 also the tuning seconds, after the device seconds, and the
//              HLO text it was compiled from, after the executable: u64 raw
//              size and its zstd frame, both 0/empty when not kept)
//            kind 2: a tuning record (tenant, compiler version and all)
//            kind 3: the manifest, last and exactly once: u64 entry count,
//              u64 record count, then every earlier item's checksum in order
//   nothing may follow the manifest.
//
// Pure functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/entry.h"

namespace kiln::cache {

// Bump when the layout above changes. Readers take kOldestBundleFormat up
// to this one and refuse the rest; writers write this one.
inline constexpr uint32_t kBundleFormatVersion = 2;
inline constexpr uint32_t kOldestBundleFormat = 1;

// How hard executables and texts are compressed: an export's default; the
// shared tier, which writes on the way to a waiting server, asks for
// kFastBundleZstdLevel.
inline constexpr int kBundleZstdLevel = 3;
inline constexpr int kFastBundleZstdLevel = 1;

struct BundleEntry {
  EntryMetadata metadata;  // row_id, stored_bytes, dictionary_id and quarantined are not carried
  std::vector<KeyComponent> components;
  // Hashes of the raw request bodies the exporting store mapped to this
  // key. Carried for people (and older bundles), never imported: a store
  // cannot check them without the bodies, so a bundle listing another
  // module's body would answer that module's requests with this program.
  std::vector<Hash128> request_hashes;
  std::string executable;  // raw bytes
  // The HLO text the entry was compiled from (for explaining misses); empty
  // when the store kept none or the bundle is of format 1.
  std::string source_text;
  // As read from a bundle: the executable and the text zstd-compressed
  // without a dictionary, which the store keeps as they are. Empty
  // otherwise.
  std::string frame;
  std::string source_frame;
};

struct Bundle {
  uint32_t bundle_version = kBundleFormatVersion;
  uint32_t compiler_version = kCompilerFormatVersion;
  uint32_t schema_version = 0;  // the exporting store's schema
  std::vector<BundleEntry> entries;
  std::vector<TuningRecord> records;  // ids are not carried
};

// What `kiln inspect export` takes from a store; each field given must match.
struct BundleSelection {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> chip = std::nullopt;
  std::vector<Hash128> keys = {};  // empty: every key
  int64_t since_ms = 0;            // created at or after (Unix ms)
};

// What an export or an import did, for people.
struct BundleReport {
  int64_t entries = 0;          // exported or newly imported
  int64_t records = 0;          // likewise
  int64_t entries_present = 0;  // import: the same bytes already stored
  int64_t records_present = 0;  // import: an identical record already stored
  int64_t conflicts = 0;        // import: other bytes stored under the key (kept)
  int64_t skipped_corrupt = 0;  // export: entries failing their checksum (quarantined)
};

// Receives an export item by item (CacheStore::ExportBundle); an error
// stops the export.
struct BundleSink {
  std::function<Status(const BundleEntry&)> entry;
  std::function<Status(const TuningRecord&)> record;
};

// This kiln's store schema version (the latest migration).
uint32_t CurrentSchemaVersion();

// Checks the executable bytes an entry `id` holds; the error says what is
// wrong.
using ExecutableVerifier = std::function<Status(const EntryId& id, std::string_view executable)>;

// The runtime's verifier (runtime/format/program.h ParseProgram), and the
// program's own identity: an executable compiled for another key or chip
// than the id it is filed under is refused.
Status VerifyProgramBytes(const EntryId& id, std::string_view executable);

// Writes a bundle piece by piece (for exports larger than memory): the
// header, then items in any order of entries and records, then the
// manifest; each call returns the bytes to append. Thread-compatible.
class BundleEncoder {
 public:
  explicit BundleEncoder(int zstd_level = kBundleZstdLevel) : zstd_level_(zstd_level) {}
  // The header for `bundle`'s versions (its entries and records are not read).
  std::string Header(const Bundle& versions) const;
  // Fails only when the executable cannot be compressed.
  Result<std::string> EntryItem(const BundleEntry& entry);
  std::string RecordItem(const TuningRecord& record);
  std::string Manifest() const;

 private:
  std::vector<uint64_t> checksums_;
  uint64_t entries_ = 0;
  uint64_t records_ = 0;
  int zstd_level_;
};

// The bundle's bytes (BundleEncoder over all of it).
Result<std::string> EncodeBundle(const Bundle& bundle, int zstd_level = kBundleZstdLevel);

// Reads and checks a whole bundle: magic, versions (bundle format must be
// kBundleFormatVersion, compiler format kCompilerFormatVersion, schema at
// most `max_schema_version`), every item checksum against its item and the
// manifest, every field (names by ValidateName, seconds and times by
// entry.h's checks), every executable against its checksum and `verify`. A DataLoss or FailedPrecondition error names the item ("entry
// 3 (alice/KEY/v5e/v1): ...") and what is wrong.
Result<Bundle> DecodeBundle(std::string_view bytes, uint32_t max_schema_version,
                            const ExecutableVerifier& verify = VerifyProgramBytes);

}  // namespace kiln::cache
