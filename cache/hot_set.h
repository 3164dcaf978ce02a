// A bounded in-memory set of recently used executables in front of SQLite.
//
// Holds decompressed, checksum-verified executables keyed by EntryId
// (tenant, key, chip, format version), least recently used first out, so
// the total of their raw sizes stays within `capacity_bytes`. An executable
// larger than the capacity is not kept. Values are shared and immutable: a
// caller may keep one after it has been dropped from the set.
//
// Thread-safe: every method takes one internal mutex (held only for map
// and list updates, never for I/O).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/entry.h"

namespace kiln::cache {

struct HotEntry {
  EntryMetadata metadata;
  std::string executable;  // raw bytes, verified against metadata.checksum
};

class HotSet {
 public:
  explicit HotSet(uint64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  // The entry for `id` (now most recent), or null.
  std::shared_ptr<const HotEntry> Find(const EntryId& id);
  // Inserts or replaces; evicts least recently used entries to fit.
  void Insert(std::shared_ptr<const HotEntry> entry);
  void Erase(const EntryId& id);
  void Clear();

  uint64_t bytes() const;
  size_t size() const;
  uint64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  using Order = std::list<std::shared_ptr<const HotEntry>>;
  void EraseLocked(Order::iterator it);

  const uint64_t capacity_bytes_;
  mutable std::mutex mutex_;
  Order order_;  // most recent first
  std::unordered_map<EntryId, Order::iterator, EntryIdHash> index_;
  uint64_t bytes_ = 0;
};

}  // namespace kiln::cache
