// CacheStore::Summarize: totals over one tenant's or chip's entries.
#include "cache/cache_store.h"

namespace kiln::cache {

Result<EntrySummary> CacheStore::Summarize(const ListFilter& filter) {
  (void)FlushHitStats();  // advisory figures: a full disk must not stop a summary
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(
      Statement select,
      reader->Prepare("SELECT count(*), total(quarantined), total(raw_bytes), total(stored_bytes), "
                      "total(CASE WHEN quarantined = 0 THEN hit_count END), "
                      "total(CASE WHEN quarantined = 0 THEN hit_count * compile_seconds END) "
                      "FROM entries WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR chip = ?2)"));
  filter.tenant ? select.BindText(1, *filter.tenant) : select.BindNull(1);
  filter.chip ? select.BindText(2, *filter.chip) : select.BindNull(2);
  KILN_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return InternalError("cache: summary returned no row");
  EntrySummary summary;
  summary.entries = select.ColumnInt(0);
  summary.quarantined_entries = static_cast<int64_t>(select.ColumnDouble(1));
  summary.raw_bytes = static_cast<uint64_t>(select.ColumnDouble(2));
  summary.stored_bytes = static_cast<uint64_t>(select.ColumnDouble(3));
  summary.hits = static_cast<int64_t>(select.ColumnDouble(4));
  summary.compile_seconds_saved = select.ColumnDouble(5);
  return summary;
}

}  // namespace kiln::cache
