// Internal to the cache store: the SQL column list of an entry's metadata
// and its decoding, and the rows an entry is written as (inside one of the
// store's write transactions, store_writer.h). Not part of the public
// interface. Thread-compatible: callers hold the writer lock.
#pragma once

#include <memory>
#include <string>

#include "cache/entry.h"
#include "cache/hot_set.h"
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

// An entry ready to write: its metadata and compressed bytes (the raw
// bytes are copied into `entry` only once it is written).
struct PreparedEntry {
  std::shared_ptr<HotEntry> entry;
  std::string frame;
  std::string source_frame;  // empty: no source text kept
};

// The entry's rows, in the caller's transaction: entry, bytes, key
// components (kept as they are when `keep_components` and the request has
// none), the source text when there is one, and the request-body mapping.
// Sets prepared.entry->metadata's row_id and hit_count.
Status WriteEntryRows(Connection& writer, const PutRequest& request, PreparedEntry& prepared, bool keep_components);

// Adds `delta` to the persisted counter `name` ("evicted", "quarantined").
Status BumpCounter(Connection& writer, const char* name, int64_t delta);

// A checksum is an unsigned 64-bit value kept in a signed SQLite INTEGER.
inline int64_t ChecksumToSql(uint64_t checksum) { return static_cast<int64_t>(checksum); }
inline uint64_t ChecksumFromSql(int64_t value) { return static_cast<uint64_t>(value); }

}  // namespace kiln::cache
