// CacheStore::NearestEntries: the stored entries nearest to a missed key.
#include <algorithm>
#include <map>
#include <tuple>

#include "cache/cache_store.h"
#include "cache/components.h"
#include "cache/store_rows.h"

namespace kiln::cache {

Result<std::vector<Explanation>> CacheStore::NearestEntries(const std::string& tenant, const std::string& chip,
                                                            uint32_t format_version,
                                                            const std::vector<KeyComponent>& components,
                                                            size_t limit) {
  if (tenant.empty() || chip.empty()) return InvalidArgumentError("cache: explain needs a tenant and a chip");
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  // Per candidate entry: module components shared, its chip, same options.
  struct Candidate {
    int module_shared = 0;
    bool same_chip = false;
    bool same_options = false;
  };
  std::map<int64_t, Candidate> candidates;  // by row id; ordered for ties
  {
    KILN_ASSIGN_OR_RETURN(
        Statement matches,
        reader->Prepare("SELECT c.entry_id, e.chip FROM key_components c JOIN entries e ON e.id = c.entry_id "
                        "WHERE c.component = ?1 AND c.hash = ?2 AND e.tenant = ?3 "
                        "AND e.format_version = ?4 AND e.quarantined = 0"));
    for (const KeyComponent& component : components) {
      if (component.name == "target" || component.name == "module config") continue;
      const bool is_options = component.name == "options";
      matches.BindText(1, component.name).BindText(2, component.hash.Hex()).BindText(3, tenant);
      matches.Bind(4, static_cast<int64_t>(format_version));
      while (true) {
        KILN_ASSIGN_OR_RETURN(bool row, matches.Step());
        if (!row) break;
        if (is_options) {
          auto it = candidates.find(matches.ColumnInt(0));
          if (it != candidates.end()) it->second.same_options = true;
          continue;
        }
        Candidate& candidate = candidates[matches.ColumnInt(0)];
        ++candidate.module_shared;
        candidate.same_chip = matches.ColumnText(1) == chip;
      }
      matches.Reset();
    }
  }
  // Options come last in `components`; a candidate first seen there shares
  // no module component and was never added. Best first; among equals the
  // newest (highest row id), so the answer is deterministic.
  using Ranked = std::pair<std::tuple<int, bool, bool, int64_t>, int64_t>;
  std::vector<Ranked> ranked;
  ranked.reserve(candidates.size());
  for (const auto& [row_id, c] : candidates) {
    ranked.push_back({{c.module_shared, c.same_chip, c.same_options, row_id}, row_id});
  }
  const size_t kept = std::min(limit, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + kept, ranked.end(), std::greater<>());
  ranked.resize(kept);

  std::vector<Explanation> out;
  for (const Ranked& candidate : ranked) {
    const int64_t row_id = candidate.second;
    Explanation explanation;
    explanation.module_components_shared = std::get<0>(candidate.first);
    {
      KILN_ASSIGN_OR_RETURN(Statement select,
                            reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS " FROM entries WHERE id = ?1"));
      KILN_ASSIGN_OR_RETURN(bool found, select.Bind(1, row_id).Step());
      if (!found) continue;
      KILN_ASSIGN_OR_RETURN(explanation.nearest, MetadataFromRow(select));
    }
    {
      KILN_ASSIGN_OR_RETURN(Statement select,
                            reader->Prepare("SELECT component, hash FROM key_components WHERE entry_id = ?1 "
                                            "ORDER BY rowid"));
      select.Bind(1, row_id);
      while (true) {
        KILN_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        KILN_ASSIGN_OR_RETURN(Hash128 hash, ParseHash128(select.ColumnText(1)));
        explanation.nearest_components.push_back({std::string(select.ColumnText(0)), hash});
      }
    }
    explanation.differing = DifferingComponents(components, explanation.nearest_components);
    for (const KeyComponent& component : components) {
      for (const KeyComponent& theirs : explanation.nearest_components) {
        if (theirs.name == component.name && theirs.hash == component.hash) ++explanation.shared_components;
      }
    }
    out.push_back(std::move(explanation));
  }
  return out;
}

}  // namespace kiln::cache
