// StoredEntries: the entries a tenant names by key, as the front doors find
// them: the cache store behind the hit path's in-memory index.
//
// Find turns a key a client sent into the entry's id in the caller's
// namespace (the index, else a store listing; never another namespace's
// entry). FindHot answers from memory alone (the index and the store's hot
// set) and never blocks on SQLite, so an event loop may call it; a memory
// miss is nullopt and the caller goes to the store. Hits counted in memory
// are written to the store on `flush_threads` (at most one such write
// queued at a time), never on the caller's thread.
//
// Borrows the store and the threads; thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/worker_pool.h"
#include "cache/cache_store.h"
#include "server/service/entry_view.h"
#include "server/service/executable_index.h"

namespace kiln::service {

class StoredEntries {
 public:
  StoredEntries(cache::CacheStore& store, WorkerPool& flush_threads) : store_(store), flush_threads_(flush_threads) {}

  // An entry served from memory: its indexed facts and its bytes.
  struct Hot {
    std::shared_ptr<const IndexedEntry> entry;
    SharedBytes executable;
  };
  // The entry of `tenant` under `key` if both the index and the hot set
  // hold it (and it is for `chip`, when given). `count_hit` counts a hit
  // (false: a metadata-only look, HEAD).
  std::optional<Hot> FindHot(std::string_view tenant, const hlo::Hash128& key, bool count_hit = true,
                             std::string_view chip = {});

  // The entry for `id` from the store (a hit counted), indexed; nullopt on
  // a miss. Fails with 500 internal when the store cannot be read.
  Result<std::optional<EntryView>> LookUp(const cache::EntryId& id);

  // The id of the entry `tenant` stores under the key `key_text` (32
  // lowercase hex digits, else 400 invalid_key); 404 when the tenant has
  // none. Without `use_index` the index is skipped (it pointed at an entry
  // gone since).
  Result<cache::EntryId> Find(const std::string& tenant, std::string_view key_text, bool use_index = true);

  // Indexes an entry the store just answered or stored.
  void Remember(EntryView view, uint64_t raw_bytes);
  void Forget(const cache::EntryId& id);
  void ForgetAll();

  cache::CacheStore& store() { return store_; }

 private:
  void ScheduleHitStatsFlush();

  cache::CacheStore& store_;
  WorkerPool& flush_threads_;
  ExecutableIndex index_;
  std::atomic<bool> hit_flush_queued_{false};
};

// The 404 of a key `tenant` does not store. It depends only on the request
// (the key and the caller's namespace), never on whether the key exists in
// another namespace.
Error EntryNotFound(std::string_view key_text, std::string_view tenant);

}  // namespace kiln::service
