#include "cache/reader_pool.h"

#include <utility>

namespace kiln::cache {

ReaderLease::ReaderLease(ReaderLease&& other) noexcept
    : pool_(other.pool_), connection_(std::move(other.connection_)) {}

ReaderLease::~ReaderLease() {
  if (connection_ != nullptr) pool_->Return(std::move(connection_));
}

ReaderPool::ReaderPool(std::string path, int max_connections, ConnectionOptions options)
    : path_(std::move(path)), max_connections_(max_connections < 1 ? 1 : max_connections), options_([&] {
        options.read_only = true;
        return options;
      }()) {}

Result<ReaderLease> ReaderPool::Acquire() {
  {
    std::unique_lock lock(mutex_);
    idle_available_.wait(lock, [&] { return !idle_.empty() || open_ < max_connections_; });
    if (!idle_.empty()) {
      std::unique_ptr<Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return ReaderLease(this, std::move(connection));
    }
    ++open_;  // reserve a slot; open outside the lock
  }
  auto connection = Connection::Open(path_, options_);
  if (!connection) {
    std::lock_guard lock(mutex_);
    --open_;
    idle_available_.notify_one();
    return std::unexpected(connection.error());
  }
  return ReaderLease(this, std::move(*connection));
}

void ReaderPool::Return(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(connection));
  idle_available_.notify_one();
}

}  // namespace kiln::cache
