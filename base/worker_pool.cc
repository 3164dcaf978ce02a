#include "base/worker_pool.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace kiln {

WorkerPool::WorkerPool(int threads, size_t queue_capacity)
    : queue_capacity_(std::max<size_t>(queue_capacity, 1)) {
  threads = std::max(threads, 1);
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this](std::stop_token stop) { WorkLoop(stop); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  for (std::jthread& thread : threads_) thread.request_stop();
  ready_.notify_all();
  threads_.clear();  // joins
  // Tasks never started are destroyed here, outside the lock.
  std::deque<Task> abandoned;
  {
    std::lock_guard lock(mu_);
    abandoned.swap(queue_);
  }
}

bool WorkerPool::TrySubmit(Task& task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= queue_capacity_) return false;
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

size_t WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

size_t WorkerPool::idle() const {
  std::lock_guard lock(mu_);
  return waiting_ > queue_.size() ? waiting_ - queue_.size() : 0;
}

void WorkerPool::WorkLoop(std::stop_token stop) {
  while (true) {
    Task task;
    {
      std::unique_lock lock(mu_);
      ++waiting_;
      const bool woken = ready_.wait(lock, stop, [this] { return !queue_.empty(); });
      --waiting_;
      if (!woken) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    // A task that throws (out of memory where a hostile input forced a
    // large allocation) must not end the process: its Responder, dropped
    // with the task, answers 500, and the thread goes on.
    try {
      task();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kiln: a worker task failed: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "kiln: a worker task failed with an unknown exception\n");
    }
  }
}

}  // namespace kiln
