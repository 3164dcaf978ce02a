// Internal to the cache store: the SQL column list of an entry's metadata
// and its decoding. Not part of the public interface. Thread-compatible.
#pragma once

#include <string>

#include "cache/entry.h"
#include "cache/sqlite_connection.h"

namespace kiln::cache {

// Columns 0..16 of every query that reads metadata via MetadataFromRow.
#define KILN_ENTRY_METADATA_COLUMNS                                                                   \
  "id, tenant, key, chip, format_version, options, plan_kind, raw_bytes, stored_bytes, checksum, " \
  "dictionary_id, compile_seconds, device_seconds, created_ms, last_hit_ms, hit_count, quarantined, tune_seconds"
inline constexpr int kEntryMetadataColumnCount = 18;

// An entry row with its compressed executable.
struct StoredRow {
  EntryMetadata metadata;
  std::string frame;  // zstd frame as stored
};

// Fails when the row holds a malformed key or plan kind.
Result<EntryMetadata> MetadataFromRow(const Statement& row);

// The rowid of an entry: XXH3-64 of its identity, folded to a positive
// 63-bit integer. Part of the schema (0001_initial.sql).
int64_t EntryRowId(const EntryId& id);

// A checksum is an unsigned 64-bit value kept in a signed SQLite INTEGER.
inline int64_t ChecksumToSql(uint64_t checksum) { return static_cast<int64_t>(checksum); }
inline uint64_t ChecksumFromSql(int64_t value) { return static_cast<uint64_t>(value); }

}  // namespace kiln::cache
