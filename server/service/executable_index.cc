#include "server/service/executable_index.h"

#include <algorithm>
#include <mutex>

namespace kiln::service {
namespace {

bool SameOwner(const IndexedEntry& entry, std::string_view tenant, const hlo::Hash128& key) {
  return entry.view.id.key == key && entry.view.id.tenant == tenant;
}

}  // namespace

std::shared_ptr<const IndexedEntry> MakeIndexedEntry(EntryView view, uint64_t raw_bytes) {
  auto entry = std::make_shared<IndexedEntry>();
  view.executable = nullptr;  // the bytes live in the store's hot set
  entry->key_hex = view.id.key.Hex();
  entry->etag = "\"" + entry->key_hex + "\"";
  entry->raw_bytes = raw_bytes;
  entry->view = std::move(view);
  return entry;
}


std::shared_ptr<const IndexedEntry> ExecutableIndex::Find(std::string_view tenant, const hlo::Hash128& key) const {
  std::shared_lock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  for (const auto& entry : it->second) {
    if (SameOwner(*entry, tenant, key)) return entry;
  }
  return nullptr;
}

void ExecutableIndex::Remember(std::shared_ptr<const IndexedEntry> entry) {
  if (capacity_ == 0) return;
  std::unique_lock lock(mu_);
  Owners& owners = entries_[entry->view.id.key];
  for (auto& existing : owners) {
    if (SameOwner(*existing, entry->view.id.tenant, entry->view.id.key)) {
      existing = std::move(entry);
      return;
    }
  }
  if (count_ >= capacity_) {
    entries_.clear();
    count_ = 0;
    entries_[entry->view.id.key].push_back(std::move(entry));
  } else {
    owners.push_back(std::move(entry));
  }
  ++count_;
}

void ExecutableIndex::Forget(const cache::EntryId& id) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(id.key);
  if (it == entries_.end()) return;
  Owners& owners = it->second;
  const size_t before = owners.size();
  std::erase_if(owners, [&id](const auto& entry) { return SameOwner(*entry, id.tenant, id.key); });
  count_ -= before - owners.size();
  if (owners.empty()) entries_.erase(it);
}

void ExecutableIndex::Clear() {
  std::unique_lock lock(mu_);
  entries_.clear();
  count_ = 0;
}

size_t ExecutableIndex::size() const {
  std::shared_lock lock(mu_);
  return count_;
}

}  // namespace kiln::service
