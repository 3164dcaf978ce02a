#include "server/service/stored_entries.h"

#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::service {

Error EntryNotFound(std::string_view key_text, std::string_view tenant) {
  return NotFoundError("no executable with key " + std::string(key_text) + " for tenant " + std::string(tenant));
}

std::optional<StoredEntries::Hot> StoredEntries::FindHot(std::string_view tenant, const hlo::Hash128& key,
                                                         bool count_hit, std::string_view chip) {
  std::shared_ptr<const IndexedEntry> entry = index_.Find(tenant, key);
  if (entry == nullptr || (!chip.empty() && entry->view.id.chip != chip)) return std::nullopt;
  // The hot set, not the index, says whether the entry is still stored: an
  // entry evicted meanwhile is no longer there, while the index may not know.
  cache::CacheStore::HotHit hot = store_.TryGetHot(entry->view.id, count_hit);
  if (hot.entry == nullptr) return std::nullopt;
  if (hot.hit_stats_due) ScheduleHitStatsFlush();
  return Hot{.entry = std::move(entry), .executable = SharedBytes(hot.entry, &hot.entry->executable)};
}

Result<std::optional<EntryView>> StoredEntries::LookUp(const cache::EntryId& id) {
  Result<std::optional<cache::CacheHit>> hit = store_.Get(id);
  if (!hit) return std::unexpected(InternalFailure("cache lookup", hit.error()));
  if (!*hit) return std::optional<EntryView>();
  EntryView view = ViewOfMetadata((*hit)->entry->metadata);
  view.executable = SharedBytes((*hit)->entry, &(*hit)->entry->executable);  // shares the hot entry's bytes
  Remember(view, view.executable->size());
  return std::optional<EntryView>(std::move(view));
}

Result<cache::EntryId> StoredEntries::Find(const std::string& tenant, std::string_view key_text, bool use_index) {
  std::optional<hlo::Hash128> key = ParseKeyHex(key_text);
  if (!key) {
    return InvalidArgumentError("key '" + std::string(key_text.substr(0, 64)) + "': expected 32 lowercase hex digits")
        .WithReason(std::string(kInvalidKey));
  }
  if (use_index) {
    if (std::shared_ptr<const IndexedEntry> entry = index_.Find(tenant, *key)) return entry->view.id;
  }
  cache::ListFilter filter{.tenant = tenant, .key_prefix = std::string(key_text), .limit = 8};
  Result<std::vector<cache::EntryMetadata>> entries = store_.List(filter);
  if (!entries) return std::unexpected(InternalFailure("cache listing", entries.error()));
  for (const cache::EntryMetadata& metadata : *entries) {
    if (!metadata.quarantined && metadata.id.format_version == kCompilerFormatVersion && metadata.id.key == *key) {
      Remember(ViewOfMetadata(metadata), metadata.raw_bytes);
      return metadata.id;
    }
  }
  return std::unexpected(EntryNotFound(key_text, tenant));
}

void StoredEntries::Remember(EntryView view, uint64_t raw_bytes) {
  index_.Remember(MakeIndexedEntry(std::move(view), raw_bytes));
}

void StoredEntries::Forget(const cache::EntryId& id) { index_.Forget(id); }

void StoredEntries::ForgetAll() { index_.Clear(); }

void StoredEntries::ScheduleHitStatsFlush() {
  if (hit_flush_queued_.exchange(true)) return;
  WorkerPool::Task task = [this] {
    (void)store_.FlushHitStats();  // advisory figures: a failure waits for the next flush
    hit_flush_queued_.store(false);
  };
  if (!flush_threads_.TrySubmit(task)) hit_flush_queued_.store(false);
}

}  // namespace kiln::service
