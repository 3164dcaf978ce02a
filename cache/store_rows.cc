#include "cache/store_rows.h"

#include <xxhash.h>

namespace kiln::cache {

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

}  // namespace kiln::cache
