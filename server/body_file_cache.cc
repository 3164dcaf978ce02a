#include "server/body_file_cache.h"

namespace kiln::server {

std::shared_ptr<const http::BodyFile> BodyFileCache::Find(const cache::EntryId& id) {
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

void BodyFileCache::Add(const cache::EntryId& id, std::string_view bytes) {
  if (bytes.empty() || bytes.size() > capacity_bytes_) return;
  {
    std::lock_guard lock(mu_);
    if (index_.contains(id)) return;
  }
  Result<std::shared_ptr<const http::BodyFile>> file = http::BodyFile::FromBytes(bytes);
  if (!file) return;  // served from memory instead
  std::lock_guard lock(mu_);
  if (index_.contains(id)) return;  // another thread made one meanwhile
  order_.emplace_front(id, std::move(*file));
  index_.emplace(id, order_.begin());
  bytes_ += bytes.size();
  while (bytes_ > capacity_bytes_) {
    bytes_ -= order_.back().second->size();
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

void BodyFileCache::Erase(const cache::EntryId& id) {
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return;
  bytes_ -= it->second->second->size();
  order_.erase(it->second);
  index_.erase(it);
}

uint64_t BodyFileCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t BodyFileCache::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

}  // namespace kiln::server
