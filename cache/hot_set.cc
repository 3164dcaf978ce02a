#include "cache/hot_set.h"

#include <utility>

namespace kiln::cache {

std::shared_ptr<const HotEntry> HotSet::Find(const EntryId& id) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return *it->second;
}

void HotSet::Insert(std::shared_ptr<const HotEntry> entry) {
  std::lock_guard lock(mutex_);
  ++generation_;
  InsertLocked(std::move(entry));
}

uint64_t HotSet::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

bool HotSet::InsertIfUnchanged(std::shared_ptr<const HotEntry> entry, uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (generation_ != generation) return false;
  InsertLocked(std::move(entry));
  return true;
}

void HotSet::InsertLocked(std::shared_ptr<const HotEntry> entry) {
  const uint64_t size = entry->executable.size();
  auto existing = index_.find(entry->metadata.id);
  if (existing != index_.end()) EraseLocked(existing->second);
  if (size > capacity_bytes_) return;
  while (bytes_ + size > capacity_bytes_ && !order_.empty()) EraseLocked(std::prev(order_.end()));
  order_.push_front(std::move(entry));
  index_.emplace(order_.front()->metadata.id, order_.begin());
  bytes_ += size;
}

void HotSet::Erase(const EntryId& id) {
  std::lock_guard lock(mutex_);
  ++generation_;
  auto it = index_.find(id);
  if (it != index_.end()) EraseLocked(it->second);
}

void HotSet::Clear() {
  std::lock_guard lock(mutex_);
  order_.clear();
  index_.clear();
  bytes_ = 0;
}

uint64_t HotSet::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

size_t HotSet::size() const {
  std::lock_guard lock(mutex_);
  return index_.size();
}

void HotSet::EraseLocked(Order::iterator it) {
  bytes_ -= (*it)->executable.size();
  index_.erase((*it)->metadata.id);
  order_.erase(it);
}

}  // namespace kiln::cache
