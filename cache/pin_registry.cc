#include "cache/pin_registry.h"

#include <utility>

namespace kiln::cache {

EntryPin& EntryPin::operator=(EntryPin&& other) noexcept {
  if (this != &other) {
    Release();
    registry_ = std::move(other.registry_);
    id_ = std::move(other.id_);
  }
  return *this;
}

void EntryPin::Release() {
  if (registry_ == nullptr) return;
  std::exchange(registry_, nullptr)->Unpin(id_);
}

EntryPin PinRegistry::Pin(const EntryId& id) {
  {
    std::lock_guard lock(mutex_);
    ++counts_[id];
  }
  return EntryPin(shared_from_this(), id);
}

bool PinRegistry::IsPinned(const EntryId& id) const {
  std::lock_guard lock(mutex_);
  return counts_.contains(id);
}

void PinRegistry::Unpin(const EntryId& id) {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(id);
  if (it != counts_.end() && --it->second == 0) counts_.erase(it);
}

}  // namespace kiln::cache
