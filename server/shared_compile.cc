// The shared tier's part in a compile (`kiln serve --shared`): before a
// local miss compiles, the entry is fetched from Redis (or this server
// waits on another server's compile lease); after it compiles, the entry is
// published. Every failure of Redis falls back to the local path: a
// trainer sees latency, never an error.
#include "cache/checksum.h"
#include "server/kiln_service.h"

namespace kiln::server {

KilnService::SharedClaim KilnService::ClaimFromShared(const cache::EntryId& id) {
  SharedClaim result;
  if (shared_ == nullptr) return result;
  // A wait on another server's lease ends when this server shuts down.
  Result<cache::shared::SharedTier::Claim> claim =
      shared_->FetchOrLease(id, [this] { return shared_stopping_.load(std::memory_order_relaxed); });
  if (!claim) return result;  // Redis down, slow or waited too long: compile here (counted by the tier)
  result.lease = std::move(claim->lease);
  if (!claim->entry) return result;
  result.waited = claim->waited;
  result.entry = ViewOfMetadata(claim->entry->metadata);
  result.entry->executable = std::make_shared<const std::string>(claim->entry->executable);
  result.fetched = std::move(claim->entry);
  return result;
}

void KilnService::KeepFetched(cache::BundleEntry fetched, const EntryView& view) {
  // A failure to store is only a lost shortcut: the next request fetches
  // the entry from Redis again.
  const uint64_t raw_bytes = fetched.executable.size();
  {
    std::lock_guard lock(fetched_mu_);
    fetched_.insert_or_assign(view.id, view);
  }
  cache::Bundle bundle;
  bundle.entries.push_back(std::move(fetched));
  if (store_->ImportBundle(bundle)) Index(view, raw_bytes);
  std::lock_guard lock(fetched_mu_);
  fetched_.erase(view.id);
}

std::optional<EntryView> KilnService::FetchedEntry(const cache::EntryId& id) {
  if (shared_ == nullptr) return std::nullopt;
  std::lock_guard lock(fetched_mu_);
  auto it = fetched_.find(id);
  if (it == fetched_.end()) return std::nullopt;
  return it->second;
}

cache::BundleEntry KilnService::SharedEntryOf(const cache::PutRequest& put, int64_t created_ms) {
  cache::BundleEntry entry;
  entry.metadata.id = put.id;
  entry.metadata.options = put.options;
  entry.metadata.plan_kind = put.plan_kind;
  entry.metadata.raw_bytes = put.executable.size();
  entry.metadata.checksum = cache::ExecutableChecksum(put.executable);
  entry.metadata.compile_seconds = put.compile_seconds;
  entry.metadata.device_seconds = put.device_seconds;
  entry.metadata.created_ms = created_ms;
  entry.components = put.components;
  if (put.request_hash) entry.request_hashes.push_back(*put.request_hash);
  entry.executable = std::string(put.executable);
  return entry;
}

void KilnService::PublishToShared(cache::BundleEntry entry) {
  if (shared_ == nullptr) return;
  // Best effort: a failure is counted by the tier and the entry stays local.
  (void)shared_->Publish(entry);
}

}  // namespace kiln::server
