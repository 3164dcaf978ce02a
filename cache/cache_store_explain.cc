// CacheStore::Explain: the nearest stored entry to a missed key.
#include <map>

#include "cache/cache_store.h"
#include "cache/components.h"
#include "cache/store_rows.h"

namespace kiln::cache {

Result<std::optional<Explanation>> CacheStore::Explain(const std::string& tenant, const std::string& chip,
                                                       uint32_t format_version,
                                                       const std::vector<KeyComponent>& components) {
  if (tenant.empty() || chip.empty()) return InvalidArgumentError("cache: explain needs a tenant and a chip");
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  // Tally, per candidate entry, how many components it shares.
  std::map<int64_t, int> shared_counts;  // by row id; ordered for ties
  {
    KILN_ASSIGN_OR_RETURN(
        Statement matches,
        reader->Prepare("SELECT c.entry_id FROM key_components c JOIN entries e ON e.id = c.entry_id "
                        "WHERE c.component = ?1 AND c.hash = ?2 AND e.tenant = ?3 AND e.chip = ?4 "
                        "AND e.format_version = ?5 AND e.quarantined = 0"));
    for (const KeyComponent& component : components) {
      matches.BindText(1, component.name).BindText(2, component.hash.Hex()).BindText(3, tenant);
      matches.BindText(4, chip).Bind(5, static_cast<int64_t>(format_version));
      while (true) {
        KILN_ASSIGN_OR_RETURN(bool row, matches.Step());
        if (!row) break;
        ++shared_counts[matches.ColumnInt(0)];
      }
      matches.Reset();
    }
  }
  if (shared_counts.empty()) return std::nullopt;
  // Most shared components wins; among equals the highest row id, so the
  // answer is deterministic.
  int64_t nearest_row = 0;
  int best = -1;
  for (const auto& [row_id, count] : shared_counts) {
    if (count >= best) {
      best = count;
      nearest_row = row_id;
    }
  }
  Explanation explanation;
  explanation.shared_components = best;
  {
    KILN_ASSIGN_OR_RETURN(Statement select,
                          reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS " FROM entries WHERE id = ?1"));
    KILN_ASSIGN_OR_RETURN(bool found, select.Bind(1, nearest_row).Step());
    if (!found) return std::nullopt;
    KILN_ASSIGN_OR_RETURN(explanation.nearest, MetadataFromRow(select));
  }
  {
    KILN_ASSIGN_OR_RETURN(Statement select,
                          reader->Prepare("SELECT component, hash FROM key_components WHERE entry_id = ?1 "
                                          "ORDER BY rowid"));
    select.Bind(1, nearest_row);
    while (true) {
      KILN_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      KILN_ASSIGN_OR_RETURN(Hash128 hash, ParseHash128(select.ColumnText(1)));
      explanation.nearest_components.push_back({std::string(select.ColumnText(0)), hash});
    }
  }
  explanation.differing = DifferingComponents(components, explanation.nearest_components);
  return explanation;
}

}  // namespace kiln::cache
