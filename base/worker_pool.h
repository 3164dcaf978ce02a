// A fixed set of threads running tasks from a bounded queue.
//
// The HTTP server runs slow handlers here so its loop thread never parses,
// compiles or touches SQLite. TrySubmit never blocks: a full queue is the
// signal to answer 503. A task that throws is logged to standard error and
// dropped (with its captures, so a Responder among them answers 500); the
// thread goes on. Thread-safe. Destruction discards tasks not yet
// started and joins the threads, so it waits for running tasks to return.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class WorkerPool {
 public:
  using Task = std::move_only_function<void()>;

  // `threads` >= 1; `queue_capacity` bounds tasks waiting for a thread.
  WorkerPool(int threads, size_t queue_capacity);
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` and returns true, or returns false (leaving `task` alone)
  // when the queue is full or the pool is shutting down.
  bool TrySubmit(Task& task);

  // Tasks waiting for a thread (not the ones running).
  size_t queued() const;
  // Threads a task submitted now would find free (threads waiting for work,
  // less the tasks already queued for them): a snapshot.
  size_t idle() const;

 private:
  void WorkLoop(std::stop_token stop);

  const size_t queue_capacity_;
  mutable std::mutex mu_;
  std::condition_variable_any ready_;
  std::deque<Task> queue_;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  size_t waiting_ = 0;      // threads waiting for a task; guarded by mu_
  std::vector<std::jthread> threads_;
};

}  // namespace kiln
