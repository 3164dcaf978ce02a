// CacheStore::TakeInvalidations: what other processes (and this one) changed
// under entries a process may hold in memory (schema/migrations/
// 0007_invalidations.sql).
#include "cache/cache_store.h"

namespace kiln::cache {
namespace {

// Rows taken per call; a reader further behind drops everything instead.
constexpr int64_t kMaxTaken = 4096;

}  // namespace

Result<CacheStore::Invalidations> CacheStore::TakeInvalidations() {
  std::lock_guard lock(invalidations_mutex_);
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
  KILN_ASSIGN_OR_RETURN(Statement select,
                        reader->Prepare("SELECT seq, tenant, key, chip, format_version FROM invalidations "
                                        "WHERE seq > ?1 ORDER BY seq LIMIT ?2"));
  select.Bind(1, invalidations_seen_).Bind(2, kMaxTaken + 1);
  Invalidations taken;
  int64_t last = invalidations_seen_;
  bool first = true;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    const int64_t seq = select.ColumnInt(0);
    // Sequence numbers have no holes but the ones the log's bound cut:
    // a first row past the next number means rows this process never saw.
    if (first && seq != invalidations_seen_ + 1) taken.everything = true;
    first = false;
    last = seq;
    if (taken.everything || static_cast<int64_t>(taken.ids.size()) >= kMaxTaken) {
      taken.everything = true;
      continue;
    }
    EntryId id;
    id.tenant = select.ColumnText(1);
    KILN_ASSIGN_OR_RETURN(id.key, ParseHash128(select.ColumnText(2)));
    id.chip = select.ColumnText(3);
    id.format_version = static_cast<uint32_t>(select.ColumnInt(4));
    taken.ids.push_back(std::move(id));
  }
  if (taken.everything) {
    // Behind by more than a batch: skip to the newest row and start over.
    KILN_ASSIGN_OR_RETURN(last, reader->QueryInt("SELECT COALESCE(MAX(seq), 0) FROM invalidations"));
    taken.ids.clear();
    hot_set_.Clear();
  } else {
    for (const EntryId& id : taken.ids) hot_set_.Erase(id);
  }
  invalidations_seen_ = last;
  return taken;
}

}  // namespace kiln::cache
