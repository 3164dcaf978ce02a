#include "cache/store_rows.h"

#include <xxhash.h>

namespace kiln::cache {
namespace {

Status WriteRequestKey(Connection& writer, const PutRequest& request) {
  if (!request.request_hash) return Ok();
  KILN_ASSIGN_OR_RETURN(
      Statement map,
      writer.Prepare("INSERT OR REPLACE INTO request_keys (tenant, request_hash, chip, format_version, key) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)"));
  map.BindText(1, request.id.tenant).BindText(2, request.request_hash->Hex()).BindText(3, request.id.chip);
  return map.Bind(4, static_cast<int64_t>(request.id.format_version)).BindText(5, request.id.key.Hex()).Run();
}

}  // namespace


int64_t EntryRowId(const EntryId& id) {
  // Length-prefixed fields, so ("ab", "c") and ("a", "bc") differ.
  std::string identity;
  for (std::string_view part : {std::string_view(id.tenant), std::string_view(id.chip)}) {
    identity += std::to_string(part.size()) + ":";
    identity += part;
  }
  identity += id.key.Hex() + "v" + std::to_string(id.format_version);
  const auto row_id = static_cast<int64_t>(XXH3_64bits(identity.data(), identity.size()) >> 1);
  return row_id == 0 ? 1 : row_id;
}

Result<EntryMetadata> MetadataFromRow(const Statement& row) {
  EntryMetadata metadata;
  metadata.row_id = row.ColumnInt(0);
  metadata.id.tenant = row.ColumnText(1);
  auto key = ParseHash128(row.ColumnText(2));
  if (!key) return DataLossError("entry row " + std::to_string(metadata.row_id) + ": " + key.error().ToString());
  metadata.id.key = *key;
  metadata.id.chip = row.ColumnText(3);
  metadata.id.format_version = static_cast<uint32_t>(row.ColumnInt(4));
  metadata.options = row.ColumnText(5);
  auto plan_kind = ParsePlanKind(row.ColumnText(6));
  if (!plan_kind) {
    return DataLossError("entry row " + std::to_string(metadata.row_id) + ": " + plan_kind.error().ToString());
  }
  metadata.plan_kind = *plan_kind;
  metadata.raw_bytes = static_cast<uint64_t>(row.ColumnInt(7));
  metadata.stored_bytes = static_cast<uint64_t>(row.ColumnInt(8));
  metadata.checksum = ChecksumFromSql(row.ColumnInt(9));
  metadata.dictionary_id = static_cast<uint32_t>(row.ColumnInt(10));
  metadata.compile_seconds = row.ColumnDouble(11);
  metadata.device_seconds = row.ColumnDouble(12);
  metadata.created_ms = row.ColumnInt(13);
  metadata.last_hit_ms = row.ColumnInt(14);
  metadata.hit_count = row.ColumnInt(15);
  metadata.quarantined = row.ColumnInt(16) != 0;
  metadata.tune_seconds = row.ColumnDouble(17);
  return metadata;
}

Status WriteEntryRows(Connection& writer, const PutRequest& request, PreparedEntry& prepared, bool keep_components) {
  const std::string& frame = prepared.frame;
  const std::string& source_frame = prepared.source_frame;
  EntryMetadata& metadata = prepared.entry->metadata;
  const std::string key_hex = request.id.key.Hex();
  {
    KILN_ASSIGN_OR_RETURN(
        Statement upsert,
        writer.Prepare(
            "INSERT INTO entries (id, tenant, key, chip, format_version, options, plan_kind, "
            "raw_bytes, stored_bytes, checksum, dictionary_id, compile_seconds, device_seconds, "
            "created_ms, last_hit_ms, hit_count, quarantined, tune_seconds) "
            "VALUES (?14, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, 0, 0, ?15) "
            "ON CONFLICT (tenant, key, chip, format_version) DO UPDATE SET "
            "options = ?5, plan_kind = ?6, raw_bytes = ?7, stored_bytes = ?8, "
            "checksum = ?9, dictionary_id = ?10, compile_seconds = ?11, device_seconds = ?12, "
            "created_ms = ?13, last_hit_ms = ?13, quarantined = 0, tune_seconds = ?15 "
            "RETURNING id, hit_count"));
    upsert.BindText(1, request.id.tenant).BindText(2, key_hex).BindText(3, request.id.chip);
    upsert.Bind(4, static_cast<int64_t>(request.id.format_version)).BindText(5, request.options);
    upsert.BindText(6, PlanKindName(request.plan_kind));
    upsert.Bind(7, static_cast<int64_t>(metadata.raw_bytes)).Bind(8, static_cast<int64_t>(frame.size()));
    upsert.Bind(9, ChecksumToSql(metadata.checksum)).Bind(10, static_cast<int64_t>(metadata.dictionary_id));
    upsert.Bind(11, request.compile_seconds).Bind(12, request.device_seconds).Bind(13, metadata.created_ms);
    upsert.Bind(14, EntryRowId(request.id)).Bind(15, request.tune_seconds);
    auto stepped = upsert.Step();
    if (!stepped && writer.last_failure() == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return AlreadyExistsError("cache: " + request.id.ToString() +
                                " collides with another entry's row id; not cached");
    }
    if (!stepped) return std::unexpected(stepped.error());
    if (!*stepped) return InternalError("cache: upsert of " + request.id.ToString() + " returned no row");
    metadata.row_id = upsert.ColumnInt(0);
    metadata.hit_count = upsert.ColumnInt(1);
    KILN_RETURN_IF_ERROR(upsert.Run());
  }
  KILN_ASSIGN_OR_RETURN(Statement bytes,
                        writer.Prepare("INSERT OR REPLACE INTO executables (entry_id, frame) VALUES (?1, ?2)"));
  KILN_RETURN_IF_ERROR(bytes.Bind(1, metadata.row_id).BindBlob(2, frame).Run());
  if (!source_frame.empty()) {
    KILN_ASSIGN_OR_RETURN(
        Statement source,
        writer.Prepare("INSERT OR REPLACE INTO entry_sources (entry_id, raw_bytes, frame) VALUES (?1, ?2, ?3)"));
    source.Bind(1, metadata.row_id).Bind(2, static_cast<int64_t>(request.source_text.size()));
    KILN_RETURN_IF_ERROR(source.BindBlob(3, source_frame).Run());
  }
  if (keep_components && request.components.empty()) return WriteRequestKey(writer, request);
  KILN_ASSIGN_OR_RETURN(Statement clear,
                        writer.Prepare("DELETE FROM key_components WHERE entry_id = ?1"));
  KILN_RETURN_IF_ERROR(clear.Bind(1, metadata.row_id).Run());
  KILN_ASSIGN_OR_RETURN(
      Statement component,
      writer.Prepare("INSERT OR REPLACE INTO key_components (entry_id, component, hash) VALUES (?1, ?2, ?3)"));
  for (const KeyComponent& part : request.components) {
    KILN_RETURN_IF_ERROR(component.Bind(1, metadata.row_id).BindText(2, part.name).BindText(3, part.hash.Hex()).Run());
  }
  return WriteRequestKey(writer, request);
}

Status BumpCounter(Connection& writer, const char* name, int64_t delta) {
  KILN_ASSIGN_OR_RETURN(Statement bump,
                        writer.Prepare("INSERT INTO counters (name, value) VALUES (?1, ?2) "
                                         "ON CONFLICT (name) DO UPDATE SET value = value + ?2"));
  return bump.BindText(1, name).Bind(2, delta).Run();
}

}  // namespace kiln::cache
