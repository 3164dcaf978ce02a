// A bounded in-memory set of recently used executables in front of SQLite.
//
// Holds decompressed, checksum-verified executables keyed by EntryId
// (tenant, key, chip, format version), least recently used first out, so
// the total of their raw sizes stays within `capacity_bytes`. An executable
// larger than the capacity is not kept. Values are shared and immutable: a
// caller may keep one after it has been dropped from the set.
//
// A reader that fetched an entry from SQLite must not put it back after a
// writer replaced or removed that entry (the set would serve stale bytes
// until they age out): writers' Insert and Erase advance a generation, and
// a reader inserts with InsertIfUnchanged, which does nothing once the
// generation moved past the one the reader saw before its read.
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
  // Inserts or replaces (a writer's new bytes); evicts least recently used
  // entries to fit. Advances the generation.
  void Insert(std::shared_ptr<const HotEntry> entry);
  // Removes (a writer's delete). Advances the generation.
  void Erase(const EntryId& id);
  // The generation to pass to InsertIfUnchanged: read it before reading
  // the entry from SQLite.
  uint64_t generation() const;
  // Inserts bytes a reader fetched, unless a writer's Insert or Erase came
  // after `generation`; true when inserted.
  bool InsertIfUnchanged(std::shared_ptr<const HotEntry> entry, uint64_t generation);
  void Clear();

  uint64_t bytes() const;
  size_t size() const;
  uint64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  using Order = std::list<std::shared_ptr<const HotEntry>>;
  void EraseLocked(Order::iterator it);
  void InsertLocked(std::shared_ptr<const HotEntry> entry);

  const uint64_t capacity_bytes_;
  mutable std::mutex mutex_;
  Order order_;  // most recent first
  std::unordered_map<EntryId, Order::iterator, EntryIdHash> index_;
  uint64_t bytes_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace kiln::cache
