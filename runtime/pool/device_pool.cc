#include "runtime/pool/device_pool.h"

#include <cstdio>
#include <exception>

namespace kiln::runtime::pool {
namespace {

std::string Gigabytes(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f GB", bytes / 1e9);
  return buffer;
}

}  // namespace

DevicePool::DevicePool(PoolSpec spec, PoolOptions options)
    : spec_(std::move(spec)), options_(options), started_(Clock::now()) {}

Result<std::unique_ptr<DevicePool>> DevicePool::Create(std::string_view spec, PoolOptions options) {
  KILN_ASSIGN_OR_RETURN(PoolSpec parsed, ParsePoolSpec(spec));
  return Create(parsed, options);
}

Result<std::unique_ptr<DevicePool>> DevicePool::Create(const PoolSpec& spec, PoolOptions options) {
  if (spec.chip_count() <= 0) return MakeError("a device pool needs at least one chip");
  if (options.max_queued == 0) return MakeError("a device pool needs a queue of at least one job");
  std::unique_ptr<DevicePool> pool(new DevicePool(spec, options));
  for (const PoolGroup& group : spec.groups) {
    for (int i = 0; i < group.count; ++i) {
      auto chip = std::make_unique<Chip>();
      chip->context.index = static_cast<int>(pool->chips_.size());
      chip->context.chip = group.chip;
      chip->context.group = group.Label();
      chip->status.index = chip->context.index;
      chip->status.kind = std::string(group.chip->name);
      chip->status.group = chip->context.group;
      pool->chips_.push_back(std::move(chip));
    }
  }
  // Threads start once every chip exists (workers read only their own).
  for (auto& chip : pool->chips_) {
    Chip* c = chip.get();
    DevicePool* self = pool.get();
    c->worker = std::thread([self, c] { self->WorkerLoop(*c); });
  }
  return pool;
}

DevicePool::~DevicePool() {
  std::deque<std::pair<std::string, Pending>> abandoned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    abandoned = queue_.Drain();
  }
  work_ready_.notify_all();
  for (auto& [client, pending] : abandoned) {
    JobStats stats;
    stats.queued_seconds = std::chrono::duration<double>(Clock::now() - pending.submitted).count();
    pending.job.done(MakeError("device pool shutting down"), stats);
  }
  for (auto& chip : chips_) {
    if (chip->worker.joinable()) chip->worker.join();
  }
}

Status DevicePool::Submit(Job job) {
  if (!job.run || !job.done) return MakeError("a pool job needs both run and done");
  if (!job.chip_kind.empty()) {
    const ChipSpec* kind = FindChip(job.chip_kind);
    bool present = false;
    for (const auto& chip : chips_) present = present || chip->context.chip == kind;
    if (!present) {
      return MakeError("no " + job.chip_kind + " chips in this pool (" + spec_.ToString() + ")");
    }
    job.chip_kind = std::string(kind->name);  // canonical spelling
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return MakeError("device pool shutting down");
    if (queue_.size() >= options_.max_queued) {
      return MakeError("pool saturated: " + std::to_string(queue_.size()) + " jobs queued");
    }
    std::string client = job.client;
    std::string kind = job.chip_kind;
    queue_.Push(std::move(client), std::move(kind), Pending{std::move(job), Clock::now()});
  }
  work_ready_.notify_all();
  return Ok();
}

Status DevicePool::RunJob(const Chip& chip, Job& job, double& device_seconds) {
  const ChipSpec& spec = *chip.context.chip;
  if (job.hbm_bytes > static_cast<uint64_t>(spec.hbm_bytes)) {
    return MakeError("execution needs " + Gigabytes(static_cast<double>(job.hbm_bytes)) +
                     " of HBM; chip " + std::to_string(chip.context.index) + " (" +
                     std::string(spec.name) + ") has " + Gigabytes(static_cast<double>(spec.hbm_bytes)));
  }
  try {
    Result<double> seconds = job.run(chip.context);
    if (!seconds) return std::unexpected(seconds.error());
    device_seconds = *seconds;
    return Ok();
  } catch (const std::exception& e) {
    return MakeError(std::string("job failed with an exception: ") + e.what());
  } catch (...) {
    return MakeError("job failed with an unknown exception");
  }
}

void DevicePool::WorkerLoop(Chip& chip) {
  const std::string_view kind = chip.context.chip->name;
  while (true) {
    std::optional<std::pair<std::string, Pending>> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [&] { return stopping_ || queue_.HasWorkFor(kind); });
      if (stopping_) return;
      next = queue_.Pop(kind);
      if (!next) continue;
      chip.status.busy = true;
      chip.status.client = next->first;
    }
    Pending& pending = next->second;
    const Clock::time_point start = Clock::now();
    JobStats stats;
    stats.chip = chip.context.index;
    stats.queued_seconds = std::chrono::duration<double>(start - pending.submitted).count();
    Status outcome = RunJob(chip, pending.job, stats.device_seconds);
    stats.run_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    {
      std::lock_guard<std::mutex> lock(mu_);
      chip.status.busy = false;
      chip.status.client.clear();
      chip.status.busy_seconds += stats.run_seconds;
      chip.status.device_seconds += stats.device_seconds;
      ++chip.status.jobs_run;
      if (!outcome) ++chip.status.jobs_failed;
    }
    pending.job.done(std::move(outcome), stats);
  }
}

PoolStatus DevicePool::status() const {
  PoolStatus out;
  out.spec = spec_.ToString();
  std::lock_guard<std::mutex> lock(mu_);
  out.uptime_seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  out.queued = queue_.size();
  out.queued_by_client = queue_.Depths();
  double total = 0;
  for (const auto& chip : chips_) {
    ChipStatus s = chip->status;
    s.utilization = out.uptime_seconds > 0 ? std::min(1.0, s.busy_seconds / out.uptime_seconds) : 0;
    total += s.utilization;
    out.chips.push_back(std::move(s));
  }
  out.utilization = chips_.empty() ? 0 : total / static_cast<double>(chips_.size());
  return out;
}

}  // namespace kiln::runtime::pool
