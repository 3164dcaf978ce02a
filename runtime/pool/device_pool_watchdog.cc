// DevicePool's watchdog: ends queued jobs that are cancelled, past their
// deadline, shut down or tired of waiting for host memory, and stops running
// ones through their Interrupt. One thread, woken by Submit, by a job
// starting and by Shutdown, else at the next deadline or poll.
#include <cstdio>

#include "runtime/pool/device_pool.h"

namespace kiln::runtime::pool {
namespace {

std::string SecondsText(double seconds) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.2f s", seconds);
  return buffer;
}

// The code of a job the pool ended early.
ErrorCode EndCode(JobEnd end) {
  switch (end) {
    case JobEnd::kCancelled:
      return ErrorCode::kCancelled;
    case JobEnd::kDeadline:
      return ErrorCode::kDeadlineExceeded;
    case JobEnd::kShutdown:
    case JobEnd::kMemoryBusy:
      return ErrorCode::kUnavailable;
    case JobEnd::kCompleted:
    case JobEnd::kFailed:
      break;
  }
  return ErrorCode::kInternal;
}

}  // namespace

void DevicePool::Shutdown(Clock::time_point by) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    shutdown_at_ = std::min(shutdown_at_, by);
  }
  watch_.notify_all();
}

std::string DevicePool::MemoryFigures(uint64_t need) const {
  size_t running = 0;
  for (const auto& chip : chips_) running += chip->running != nullptr ? 1 : 0;
  return FormatGiB(need) + " of host memory; the pool's budget is " + FormatGiB(options_.host_memory_bytes) + ", " +
         FormatGiB(host_in_use_) + " of it held by " + std::to_string(running) + " running job" +
         (running == 1 ? "" : "s");
}

StopReason DevicePool::DueReason(const Job& job, Clock::time_point now) const {
  if (job.cancelled && job.cancelled()) return StopReason::kCancelled;
  const Clock::time_point due = std::min(job.deadline, shutdown_at_);
  if (now < due) return StopReason::kNone;
  return shutdown_at_ <= job.deadline ? StopReason::kShutdown : StopReason::kDeadline;
}

DevicePool::Clock::time_point DevicePool::Sweep(Clock::time_point now, std::deque<Ended>& ended) {
  Clock::time_point next = shutdown_at_ > now ? shutdown_at_ : Clock::time_point::max();
  bool poll = false;
  auto watch = [&](const Job& job) {
    next = std::min(next, job.deadline);
    poll = poll || static_cast<bool>(job.cancelled);
  };

  // Queued jobs that must end are taken out and never run.
  std::deque<std::pair<std::string, Pending>> taken = queue_.RemoveIf([&](const Pending& pending) {
    const StopReason reason = DueReason(pending.job, now);
    if (reason != StopReason::kNone) return true;
    if (pending.job.host_bytes > 0 && !FitsMemory(pending.job)) {
      const Clock::time_point give_up = pending.submitted + options_.max_memory_wait;
      if (now >= give_up) return true;
      next = std::min(next, give_up);
    }
    watch(pending.job);
    return false;
  });
  for (auto& [client, pending] : taken) {
    const std::string queued = SecondsText(ToSeconds(now - pending.submitted));
    switch (DueReason(pending.job, now)) {
      case StopReason::kCancelled:
        ++cancelled_total_;
        ended.push_back(
            {std::move(pending), JobEnd::kCancelled, "cancelled by its client after " + queued + " in the queue"});
        break;
      case StopReason::kDeadline:
        ++deadline_total_;
        ended.push_back({std::move(pending), JobEnd::kDeadline, "deadline passed after " + queued + " in the queue"});
        break;
      case StopReason::kShutdown:
        ended.push_back({std::move(pending), JobEnd::kShutdown, "device pool shutting down"});
        break;
      case StopReason::kNone: {
        ++memory_busy_total_;
        std::string why =
            "waited " + queued + " for host memory: the run needs " + MemoryFigures(pending.job.host_bytes);
        ended.push_back({std::move(pending), JobEnd::kMemoryBusy, std::move(why)});
        break;
      }
    }
  }

  // Running jobs are told to stop; their workers report how they ended.
  for (const auto& chip : chips_) {
    if (chip->running == nullptr) continue;
    const Job& job = chip->running->job;
    if (const StopReason reason = DueReason(job, now); reason != StopReason::kNone) {
      job.interrupt->Stop(reason);
    } else {
      watch(job);
    }
  }
  if (poll) next = std::min(next, now + options_.watch_interval);
  return next;
}

void DevicePool::Finish(Ended ended) {
  JobStats stats;
  stats.end = ended.end;
  stats.queued_seconds = ToSeconds(Clock::now() - ended.pending.submitted);
  ended.pending.job.done(Error::Coded(EndCode(ended.end), std::move(ended.message)), stats);
}

void DevicePool::WatchdogLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::deque<Ended> ended;
    const Clock::time_point next = Sweep(Clock::now(), ended);
    if (!ended.empty()) {
      lock.unlock();
      for (Ended& e : ended) Finish(std::move(e));
      lock.lock();
      continue;
    }
    if (next == Clock::time_point::max()) {
      watch_.wait(lock);
    } else {
      watch_.wait_until(lock, next);
    }
  }
}

}  // namespace kiln::runtime::pool
