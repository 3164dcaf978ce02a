// The fast path's memory: raw-request hash -> key, for bodies seen by this
// process (the store keeps the same map on disk for bodies that compiled).
//
// Bounded: once `capacity` mappings are held the map starts over, which only
// costs a store lookup. A stale mapping is harmless: the caller still looks
// the key up in the store. Thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "compiler/hlo/fingerprint.h"

namespace kiln::service {

class RequestKeyMap {
 public:
  explicit RequestKeyMap(size_t capacity = 1 << 16) : capacity_(capacity) {}

  std::optional<hlo::Hash128> Find(const hlo::Hash128& request_hash) const {
    std::lock_guard lock(mu_);
    auto it = keys_.find(request_hash);
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  }

  void Remember(const hlo::Hash128& request_hash, const hlo::Hash128& key) {
    std::lock_guard lock(mu_);
    if (keys_.size() >= capacity_) keys_.clear();
    keys_[request_hash] = key;
  }

 private:
  struct HashOfHash {
    size_t operator()(const hlo::Hash128& h) const { return static_cast<size_t>(h.low ^ (h.high * 0x9e3779b97f4a7c15ull)); }
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<hlo::Hash128, hlo::Hash128, HashOfHash> keys_;  // guarded by mu_
};

}  // namespace kiln::service
