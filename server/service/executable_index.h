// The hit path's memory: (tenant, key) -> the entry's id and the facts its
// answers carry, so GET/HEAD /v1/executables/{key} and a repeated compile
// are answered on the loop thread without SQLite.
//
// A key names one chip (the fingerprint covers the target), so the index is
// also the key -> chip map that spares FindEntry a store listing. Lookups
// are by exact tenant (namespace): an entry of one namespace is never found
// for another. It only
// points at entries; their bytes stay in the cache store's hot set (bounded
// by bytes), looked up with CacheStore::TryGetHot. An entry evicted from the
// store leaves a stale pointer here, which is harmless: the hot set misses,
// the request goes to the worker pool, and the store answers. Bounded by
// `capacity` (when full, the map starts over). Thread-safe: a shared mutex,
// readers in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/entry.h"
#include "compiler/hlo/fingerprint.h"
#include "server/service/entry_view.h"

namespace kiln::service {

// An indexed entry: its view (without bytes) and header values built once.
struct IndexedEntry {
  EntryView view;
  std::string key_hex;
  std::string etag;  // "\"<key_hex>\""
  uint64_t raw_bytes = 0;
};

// `view` without its bytes, with `raw_bytes` the executable's size.
std::shared_ptr<const IndexedEntry> MakeIndexedEntry(EntryView view, uint64_t raw_bytes);

class ExecutableIndex {
 public:
  explicit ExecutableIndex(size_t capacity = 1 << 16) : capacity_(capacity) {}

  // The entry of `tenant` with `key`; null when it is not indexed.
  std::shared_ptr<const IndexedEntry> Find(std::string_view tenant, const hlo::Hash128& key) const;
  // Adds or replaces the entry with the same tenant and key.
  void Remember(std::shared_ptr<const IndexedEntry> entry);
  // Drops the entry with `id`'s tenant and key, if indexed.
  void Forget(const cache::EntryId& id);
  // Drops every entry.
  void Clear();
  size_t size() const;

 private:
  struct KeyHash {
    size_t operator()(const hlo::Hash128& h) const {
      return static_cast<size_t>(h.low ^ (h.high * 0x9e3779b97f4a7c15ull));
    }
  };
  using Owners = std::vector<std::shared_ptr<const IndexedEntry>>;  // one per tenant

  const size_t capacity_;
  mutable std::shared_mutex mu_;
  std::unordered_map<hlo::Hash128, Owners, KeyHash> entries_;  // guarded by mu_
  size_t count_ = 0;                                           // guarded by mu_
};

}  // namespace kiln::service
