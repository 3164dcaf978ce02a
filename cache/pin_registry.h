// Pins that keep entries in use from being evicted.
//
// A request that serves or runs an executable holds an EntryPin for as long
// as it uses the entry; eviction (by budget or by key) skips pinned entries.
// Pins are per process. An EntryPin shares ownership of its registry, so it
// may safely outlive the store that handed it out.
//
// Thread-safe: the registry is guarded by a mutex; an EntryPin is a
// move-only value owned by one thread at a time.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/entry.h"

namespace kiln::cache {

class PinRegistry;

class EntryPin {
 public:
  EntryPin() = default;
  EntryPin(EntryPin&& other) noexcept = default;
  EntryPin& operator=(EntryPin&& other) noexcept;
  EntryPin(const EntryPin&) = delete;
  EntryPin& operator=(const EntryPin&) = delete;
  ~EntryPin() { Release(); }

  bool pinned() const { return registry_ != nullptr; }
  void Release();  // unpins early; idempotent

 private:
  friend class PinRegistry;
  EntryPin(std::shared_ptr<PinRegistry> registry, EntryId id)
      : registry_(std::move(registry)), id_(std::move(id)) {}
  std::shared_ptr<PinRegistry> registry_;
  EntryId id_;
};

class PinRegistry : public std::enable_shared_from_this<PinRegistry> {
 public:
  static std::shared_ptr<PinRegistry> Create() { return std::shared_ptr<PinRegistry>(new PinRegistry()); }

  EntryPin Pin(const EntryId& id);
  bool IsPinned(const EntryId& id) const;

 private:
  friend class EntryPin;
  PinRegistry() = default;
  void Unpin(const EntryId& id);

  mutable std::mutex mutex_;
  std::unordered_map<EntryId, int, EntryIdHash> counts_;
};

}  // namespace kiln::cache
