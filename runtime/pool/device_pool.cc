#include "runtime/pool/device_pool.h"

#include <cstdio>
#include <exception>
#include <map>

#include "base/host_cores.h"

namespace kiln::runtime::pool {
namespace {

std::string Gigabytes(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f GB", bytes / 1e9);
  return buffer;
}

}  // namespace

std::string FormatGiB(uint64_t bytes) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buffer;
}

std::string_view JobEndName(JobEnd end) {
  switch (end) {
    case JobEnd::kCompleted: return "completed";
    case JobEnd::kFailed: return "failed";
    case JobEnd::kCancelled: return "cancelled";
    case JobEnd::kDeadline: return "deadline";
    case JobEnd::kShutdown: return "shutdown";
    case JobEnd::kMemoryBusy: return "memory_busy";
  }
  return "unknown";
}

DevicePool::DevicePool(PoolSpec spec, PoolOptions options)
    : spec_(std::move(spec)), options_(options), started_(Clock::now()) {}

Result<std::unique_ptr<DevicePool>> DevicePool::Create(std::string_view spec, PoolOptions options) {
  KILN_ASSIGN_OR_RETURN(PoolSpec parsed, ParsePoolSpec(spec));
  return Create(parsed, options);
}

Result<std::unique_ptr<DevicePool>> DevicePool::Create(const PoolSpec& spec, PoolOptions options) {
  if (spec.chip_count() <= 0) return InvalidArgumentError("a device pool needs at least one chip");
  if (options.max_queued == 0) return InvalidArgumentError("a device pool needs a queue of at least one job");
  if (options.watch_interval <= std::chrono::milliseconds(0)) {
    return InvalidArgumentError("a device pool needs a positive watch interval");
  }
  std::unique_ptr<DevicePool> pool(new DevicePool(spec, options));
  std::map<std::string, int> of_kind;  // chips of each kind so far
  for (const PoolGroup& group : spec.groups) {
    Chip* leader = nullptr;
    for (int i = 0; i < group.count; ++i) {
      auto chip = std::make_unique<Chip>();
      chip->context.index = static_cast<int>(pool->chips_.size());
      chip->context.chip = group.chip;
      chip->context.group = group.Label();
      chip->status.index = chip->context.index;
      chip->status.kind = std::string(group.chip->name);
      chip->status.kind_index = of_kind[chip->status.kind]++;
      chip->status.group = chip->context.group;
      if (!group.topology.empty()) {
        if (leader == nullptr) {
          leader = chip.get();
          leader->slice_kind = group.Label();
        }
        leader->slice.push_back(chip.get());
        chip->in_slice = true;
      }
      pool->chips_.push_back(std::move(chip));
    }
  }
  // Threads start once every chip exists (workers read only their own).
  DevicePool* self = pool.get();
  for (auto& chip : pool->chips_) {
    Chip* c = chip.get();
    c->worker = std::thread([self, c] { self->WorkerLoop(*c); });
  }
  pool->watchdog_ = std::thread([self] { self->WatchdogLoop(); });
  return pool;
}

DevicePool::~DevicePool() {
  // Queued jobs end now; running ones are stopped, then waited for.
  Shutdown(Clock::now());
  std::deque<std::pair<std::string, Pending>> abandoned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    abandoned = queue_.Drain();
    for (auto& chip : chips_) {
      if (chip->running != nullptr) chip->running->job.interrupt->Stop(StopReason::kShutdown);
    }
  }
  work_ready_.notify_all();
  watch_.notify_all();
  for (auto& [client, pending] : abandoned) {
    Finish(Ended{std::move(pending), JobEnd::kShutdown, "device pool shutting down"});
  }
  for (auto& chip : chips_) {
    if (chip->worker.joinable()) chip->worker.join();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

Status DevicePool::Submit(Job job) {
  if (!job.run || !job.done) return InternalError("a pool job needs both run and done");
  std::string queue_kind;
  if (!job.topology.empty()) {
    const ChipSpec* kind = FindChip(job.chip_kind);
    for (const PoolGroup& group : spec_.groups) {
      if (kind != nullptr && group.chip == kind && group.topology == job.topology) queue_kind = group.Label();
    }
    if (queue_kind.empty()) {
      PoolGroup wanted{kind, 0, job.topology};
      std::string shape = wanted.Label().substr(wanted.Label().find(':') + 1);
      return FailedPreconditionError("no " + (job.chip_kind.empty() ? std::string("chip") : job.chip_kind) +
                                     " slice of topology " + shape + " in this pool (" + spec_.ToString() +
                                     "); start the server with --pool " +
                                     (job.chip_kind.empty() ? std::string("v5e") : job.chip_kind) + ":" + shape)
          .WithReason(std::string(kChipNotInPool));
    }
    job.chip_kind = std::string(kind->name);
  } else if (!job.chip_kind.empty()) {
    const ChipSpec* kind = FindChip(job.chip_kind);
    bool present = false;
    for (const auto& chip : chips_) present = present || chip->context.chip == kind;
    if (!present) {
      return FailedPreconditionError("no " + job.chip_kind + " chips in this pool (" + spec_.ToString() + ")")
          .WithReason(std::string(kChipNotInPool));
    }
    job.chip_kind = std::string(kind->name);  // canonical spelling
    queue_kind = job.chip_kind;
  }
  if (!job.interrupt) job.interrupt = std::make_shared<Interrupt>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || shutting_down_) {
      return UnavailableError("device pool shutting down").WithReason(std::string(kDraining));
    }
    if (options_.host_memory_bytes > 0 && job.host_bytes > options_.host_memory_bytes) {
      ++memory_refused_total_;
      return ResourceExhaustedError("the run needs " + FormatGiB(job.host_bytes) +
                                    " of host memory, more than the pool's whole budget of " +
                                    FormatGiB(options_.host_memory_bytes))
          .WithReason(std::string(kTooLargeToRun));
    }
    if (queue_.size() >= options_.max_queued) {
      return UnavailableError("pool saturated: " + std::to_string(queue_.size()) + " jobs queued")
          .WithReason(std::string(kPoolSaturated));
    }
    std::string client = job.client;
    queue_.Push(std::move(client), std::move(queue_kind), Pending{std::move(job), Clock::now()});
  }
  work_ready_.notify_all();
  watch_.notify_all();
  return {};
}

Status DevicePool::RunJob(const Chip& chip, const ChipContext& context, Job& job, double& device_seconds) {
  const ChipSpec& spec = *chip.context.chip;
  if (job.hbm_bytes > static_cast<uint64_t>(spec.hbm_bytes)) {
    return ResourceExhaustedError("execution needs " + Gigabytes(static_cast<double>(job.hbm_bytes)) +
                                  " of HBM; chip " + std::to_string(chip.context.index) + " (" +
                                  std::string(spec.name) + ") has " + Gigabytes(static_cast<double>(spec.hbm_bytes)));
  }
  try {
    // The chip's program keeps this host core busy; its kernels may borrow
    // only the cores no other chip holds.
    HostCores::Lease core = HostCores::Get().Hold();
    Result<double> seconds = job.run(context);
    if (!seconds) return std::unexpected(seconds.error());
    device_seconds = *seconds;
    return Ok();
  } catch (const std::exception& e) {
    return InternalError(std::string("job failed with an exception: ") + e.what());
  } catch (...) {
    return InternalError("job failed with an unknown exception");
  }
}

bool DevicePool::FitsMemory(const Job& job) const {
  return options_.host_memory_bytes == 0 || host_in_use_ + job.host_bytes <= options_.host_memory_bytes;
}

ChipContext DevicePool::GatherSlice(Chip& leader, std::unique_lock<std::mutex>& lock) {
  for (Chip* member : leader.slice) member->reserved = member != &leader;
  work_ready_.wait(lock, [&] {
    if (stopping_) return true;
    for (Chip* member : leader.slice) {
      if (member != &leader && member->status.busy) return false;
    }
    return true;
  });
  ChipContext context = leader.context;
  context.chips = static_cast<int>(leader.slice.size());
  for (const PoolGroup& group : spec_.groups) {
    if (group.Label() == leader.slice_kind) context.topology = group.topology;
  }
  return context;
}

void DevicePool::ReleaseChips(const std::vector<Chip*>& chips, bool slice_job, const JobStats& stats, bool failed) {
  // A slice job frees its slice; a one-chip job ending on a chip its slice
  // is gathering leaves the reservation in place.
  for (Chip* chip : chips) {
    if (slice_job) chip->reserved = false;
    chip->status.busy = false;
    chip->status.client.clear();
    chip->status.label.clear();
    chip->status.busy_seconds += stats.run_seconds;
    chip->status.device_seconds += stats.device_seconds;
    ++chip->status.jobs_run;
    if (failed) ++chip->status.jobs_failed;
  }
}

void DevicePool::WorkerLoop(Chip& chip) {
  const std::string_view kind = chip.context.chip->name;
  auto admit = [this](const Pending& pending) { return FitsMemory(pending.job); };
  // One-chip jobs of its kind (or any), and its slice's jobs on a slice's
  // first chip.
  auto runs = [&](std::string_view k) {
    return k.empty() || k == kind || (!chip.slice_kind.empty() && k == chip.slice_kind);
  };
  while (true) {
    std::optional<std::pair<std::string, Pending>> next;
    ChipContext context = chip.context;
    std::vector<Chip*> held = {&chip};
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [&] { return stopping_ || (!chip.reserved && queue_.HasWorkIf(runs, admit)); });
      if (stopping_) return;
      next = queue_.PopIf(runs, admit);
      if (!next) continue;
      chip.status.busy = true;
      chip.status.client = next->first;
      chip.status.label = next->second.job.label;
      chip.running = &next->second;
      host_in_use_ += next->second.job.host_bytes;
      if (!next->second.job.topology.empty()) {
        context = GatherSlice(chip, lock);
        held = chip.slice;
        for (Chip* member : held) {
          member->status.busy = true;
          member->status.client = next->first;
          member->status.label = next->second.job.label;
        }
      }
    }
    watch_.notify_all();  // a running job's deadline to watch
    Pending& pending = next->second;
    const Clock::time_point start = Clock::now();
    JobStats stats;
    stats.chip = chip.context.index;
    stats.queued_seconds = ToSeconds(start - pending.submitted);
    Status outcome = RunJob(chip, context, pending.job, stats.device_seconds);
    stats.run_seconds = ToSeconds(Clock::now() - start);
    // A run the pool stopped ends for that reason, whatever it returned on
    // the way out; one that finished anyway keeps its result.
    const StopReason stopped = pending.job.interrupt->reason();
    stats.end = outcome ? JobEnd::kCompleted
                : stopped == StopReason::kCancelled ? JobEnd::kCancelled
                : stopped == StopReason::kDeadline  ? JobEnd::kDeadline
                : stopped == StopReason::kShutdown  ? JobEnd::kShutdown
                                                    : JobEnd::kFailed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      chip.running = nullptr;
      host_in_use_ -= pending.job.host_bytes;
      ReleaseChips(held, !pending.job.topology.empty(), stats, !outcome);
      if (stats.end == JobEnd::kCancelled) ++cancelled_total_;
      if (stats.end == JobEnd::kDeadline) ++deadline_total_;
    }
    // The memory it held may admit jobs other chips are waiting for; a
    // slice's first chip may be waiting for this one; a slice's chips are
    // free again.
    if (pending.job.host_bytes > 0 || chip.in_slice) {
      work_ready_.notify_all();
    }
    pending.job.done(std::move(outcome), stats);
  }
}

PoolStatus DevicePool::status() const {
  PoolStatus out;
  out.spec = spec_.ToString();
  std::lock_guard<std::mutex> lock(mu_);
  out.uptime_seconds = ToSeconds(Clock::now() - started_);
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
  out.host_memory_budget = options_.host_memory_bytes;
  out.host_memory_in_use = host_in_use_;
  queue_.ForEach([&](const Pending& pending) {
    out.waiting_for_memory += FitsMemory(pending.job) ? 0 : 1;
    ++out.queued_by_kind[pending.job.chip_kind];
  });
  out.cancelled_total = cancelled_total_;
  out.deadline_total = deadline_total_;
  out.memory_busy_total = memory_busy_total_;
  out.memory_refused_total = memory_refused_total_;
  return out;
}

}  // namespace kiln::runtime::pool
