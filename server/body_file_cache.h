// Executables in sealed memfds for the hit path's sendfile, least recently
// used first out, within a byte budget.
//
// The transport sends a body that has a BodyFile with sendfile(2) (page
// references, no copy into the socket), which is what lets a hit keep up
// with nginx serving a static file. Files are made on worker threads (Add
// copies the bytes once); the loop thread only looks them up. Files are
// shared: one dropped from the cache lives until its last response is sent.
// A failure to make one (no memfd support, out of memory) is not an error:
// that entry is served from memory. Thread-safe: one mutex, never held while
// copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "cache/entry.h"
#include "server/http/body_file.h"

namespace kiln::server {

class BodyFileCache {
 public:
  explicit BodyFileCache(uint64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  // The file of `id` (now most recent), or null.
  std::shared_ptr<const http::BodyFile> Find(const cache::EntryId& id);
  // Makes and keeps a file of `bytes` for `id` unless one is kept already
  // or the bytes exceed the budget.
  void Add(const cache::EntryId& id, std::string_view bytes);
  void Erase(const cache::EntryId& id);

  uint64_t bytes() const;
  size_t size() const;

 private:
  using Item = std::pair<cache::EntryId, std::shared_ptr<const http::BodyFile>>;
  using Order = std::list<Item>;

  const uint64_t capacity_bytes_;
  mutable std::mutex mu_;
  Order order_;  // most recent first; guarded by mu_
  std::unordered_map<cache::EntryId, Order::iterator, cache::EntryIdHash> index_;  // guarded by mu_
  uint64_t bytes_ = 0;                                                             // guarded by mu_
};

}  // namespace kiln::server
