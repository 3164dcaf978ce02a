#include "server/service/tune_jobs.h"

#include <algorithm>

#include <chrono>
#include <new>
#include <stdexcept>
#include <cstdio>

#include "base/clock.h"
#include "server/service/reasons.h"

namespace kiln::service {

std::string_view TuneStateName(TuneState state) {
  switch (state) {
    case TuneState::kQueued:
      return "queued";
    case TuneState::kRunning:
      return "running";
    case TuneState::kDone:
      return "done";
    case TuneState::kFailed:
      return "failed";
    case TuneState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

TuneJobs::TuneJobs(Options options, Work work)
    : options_(std::move(options)), work_(std::move(work)), ids_(std::random_device{}()) {
  for (int i = 0; i < std::max(options_.workers, 1); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

TuneJobs::~TuneJobs() {
  BeginShutdown();
  for (std::thread& worker : workers_) worker.join();
}

int64_t TuneJobs::NowMs() const {
  if (options_.clock) return options_.clock();
  return UnixNowMs();
}

std::string TuneJobs::NewId() {
  for (;;) {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(ids_()));
    if (!jobs_.contains(text)) return text;
  }
}

Result<TuneJobs::Submitted> TuneJobs::Submit(TuneJobSpec spec) {
  std::lock_guard lock(mu_);
  if (stopping_) return UnavailableError("the server is shutting down; no new tuning jobs").WithReason(std::string(kDraining));
  for (const auto& [id, job] : jobs_) {
    if ((job->state == TuneState::kQueued || job->state == TuneState::kRunning) && job->spec.entry == spec.entry) {
      return Submitted{ViewOf(*job), false};
    }
  }
  if (spec.budget.max_seconds <= 0) spec.budget.max_seconds = options_.job_budget_s;
  if (spec.budget.max_seconds > options_.job_budget_s) {
    return InvalidArgumentError("a tuning job may run for at most " + std::to_string(int64_t(options_.job_budget_s)) +
                                " s; asked for " + std::to_string(spec.budget.max_seconds) + " s")
        .WithReason(std::string(kInvalidBudget));
  }
  const std::string& tenant = spec.entry.tenant;
  const size_t tenant_queued = std::count_if(queue_.begin(), queue_.end(), [&](const std::shared_ptr<Job>& job) {
    return job->spec.entry.tenant == tenant;
  });
  if (tenant_queued >= options_.tenant_queued) {
    return ResourceExhaustedError("tenant " + tenant + " has " + std::to_string(tenant_queued) +
                                  " tuning jobs waiting, the most one tenant may; retry after one starts")
        .WithReason(std::string(kTuneQuotaExceeded))
        .RetryAfter(10);
  }
  if (const double queued_s = TenantBudgetSeconds(tenant); queued_s + spec.budget.max_seconds > options_.tenant_budget_s) {
    return ResourceExhaustedError("tenant " + tenant + " has " + std::to_string(int64_t(queued_s)) +
                                  " s of tuning queued or running; " + std::to_string(int64_t(spec.budget.max_seconds)) +
                                  " s more would pass the " + std::to_string(int64_t(options_.tenant_budget_s)) +
                                  " s one tenant may hold")
        .WithReason(std::string(kTuneQuotaExceeded))
        .RetryAfter(10);
  }
  if (queue_.size() >= options_.queue_capacity) {
    return UnavailableError(std::to_string(queue_.size()) + " tuning jobs are waiting (the most the server queues); " +
                            "retry after one finishes")
        .WithReason(std::string(kTuneQueueFull))
        .RetryAfter(10);
  }
  auto job = std::make_shared<Job>();
  job->id = !spec.id.empty() && !jobs_.contains(spec.id) ? spec.id : NewId();
  job->spec = std::move(spec);
  job->created_ms = NowMs();
  jobs_[job->id] = job;
  queue_.push_back(job);
  wake_.notify_one();
  return Submitted{ViewOf(*job), true};
}

std::optional<TuneJobView> TuneJobs::Active(const std::string& tenant, const hlo::Hash128& key) const {
  std::lock_guard lock(mu_);
  for (const auto& [id, job] : jobs_) {
    if ((job->state == TuneState::kQueued || job->state == TuneState::kRunning) && job->spec.entry.tenant == tenant &&
        job->spec.entry.key == key) {
      return ViewOf(*job);
    }
  }
  return std::nullopt;
}

std::optional<TuneJobView> TuneJobs::Find(const std::string& tenant, const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->spec.entry.tenant != tenant) return std::nullopt;
  return ViewOf(*it->second);
}

std::vector<TuneJobView> TuneJobs::List(const std::string& tenant, size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<TuneJobView> jobs;
  for (const auto& [id, job] : jobs_) {
    if (job->spec.entry.tenant == tenant) jobs.push_back(ViewOf(*job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const TuneJobView& a, const TuneJobView& b) {
    return a.created_ms != b.created_ms ? a.created_ms > b.created_ms : a.id > b.id;
  });
  if (jobs.size() > limit) jobs.resize(limit);
  return jobs;
}

Result<TuneJobView> TuneJobs::Cancel(const std::string& tenant, const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->spec.entry.tenant != tenant) {
    return NotFoundError("no tuning job " + id + " for tenant " + tenant);
  }
  Job& job = *it->second;
  switch (job.state) {
    case TuneState::kQueued:
      std::erase(queue_, it->second);
      job.cancel = true;
      job.error = "cancelled before it started";
      Finish(job, TuneState::kCancelled);
      break;
    case TuneState::kRunning:
      job.cancel = true;
      break;
    default:
      return FailedPreconditionError("tuning job " + id + " already ended (" + std::string(TuneStateName(job.state)) +
                                     "); there is nothing to cancel")
          .WithReason(std::string(kJobFinished));
  }
  return ViewOf(job);
}

void TuneJobs::Dropped() {
  std::lock_guard lock(mu_);
  ++counts_.dropped;
}

TuneCounts TuneJobs::counts() const {
  std::lock_guard lock(mu_);
  TuneCounts counts = counts_;
  counts.queued = static_cast<int64_t>(queue_.size());
  for (const auto& [id, job] : jobs_) {
    counts.running += job->state == TuneState::kRunning;
    counts.text_bytes += job->spec.hlo.size();
  }
  return counts;
}

void TuneJobs::BeginShutdown() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (const std::shared_ptr<Job>& job : queue_) {
    job->cancel = true;
    job->error = "the server shut down before it started";
    Finish(*job, TuneState::kCancelled);
  }
  queue_.clear();
  for (auto& [id, job] : jobs_) {
    if (job->state == TuneState::kRunning) job->cancel = true;
  }
  wake_.notify_all();
}

void TuneJobs::WorkerLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    auto next = NextJob();
    std::shared_ptr<Job> job = *next;
    queue_.erase(next);
    job->state = TuneState::kRunning;
    tenant_started_[job->spec.entry.tenant] = ++starts_;
    lock.unlock();
    if (job->spec.hold) {
      Status admitted = job->spec.hold->Admit();
      if (!admitted) {
        lock.lock();
        job->refused = true;
        job->error = admitted.error().message;
        Finish(*job, TuneState::kCancelled);
        continue;
      }
    }
    const std::function<bool()> cancelled = [&job] { return job->cancel.load(std::memory_order_relaxed); };
    Result<TuneOutcome> outcome = InternalError("the tuning job did not finish");
    const auto started = std::chrono::steady_clock::now();
    try {
      outcome = work_(job->spec, job->progress, cancelled);
    } catch (const std::bad_alloc&) {
      outcome = ResourceExhaustedError("the tuning ran out of host memory");
    } catch (const std::exception& e) {
      outcome = InternalError(std::string("the tuning failed: ") + e.what());
    }
    job->run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    if (outcome) {
      job->outcome = *std::move(outcome);
      Finish(*job, TuneState::kDone);
    } else {
      job->error = outcome.error().ToString();
      Finish(*job, outcome.error().code == ErrorCode::kCancelled ? TuneState::kCancelled : TuneState::kFailed);
    }
  }
}

std::deque<std::shared_ptr<TuneJobs::Job>>::iterator TuneJobs::NextJob() {
  // The oldest job of the tenant that started a job longest ago (never: 0).
  auto best = queue_.begin();
  uint64_t best_started = UINT64_MAX;
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    auto started = tenant_started_.find((*it)->spec.entry.tenant);
    const uint64_t when = started == tenant_started_.end() ? 0 : started->second;
    if (when < best_started) {
      best = it;
      best_started = when;
    }
  }
  return best;
}

double TuneJobs::TenantBudgetSeconds(const std::string& tenant) const {
  double seconds = 0;
  for (const auto& [id, job] : jobs_) {
    if ((job->state == TuneState::kQueued || job->state == TuneState::kRunning) && job->spec.entry.tenant == tenant) {
      seconds += job->spec.budget.max_seconds;
    }
  }
  return seconds;
}

void TuneJobs::Finish(Job& job, TuneState state) {
  job.state = state;
  job.finished_ms = NowMs();
  // A finished job keeps its figures, not its module nor its hold.
  std::string().swap(job.spec.hlo);
  if (job.spec.hold) {
    job.spec.hold->Ended(state);
    job.spec.hold.reset();
  }
  if (!job.refused) Count(job, state);
  finished_order_.push_back(job.id);
  while (finished_order_.size() > options_.finished_kept) {
    jobs_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
}

void TuneJobs::Count(const Job& job, TuneState state) {
  counts_.seconds += job.run_seconds;
  switch (state) {
    case TuneState::kDone:
      ++counts_.done;
      counts_.trials += job.outcome->trials;
      if (job.outcome->stored) counts_.saved_us += job.outcome->heuristic_us - job.outcome->tuned_us;
      break;
    case TuneState::kFailed:
      ++counts_.failed;
      counts_.trials += job.progress.trials.load();
      break;
    default:
      ++counts_.cancelled;
      counts_.trials += job.progress.trials.load();
      break;
  }
}

TuneJobView TuneJobs::ViewOf(const Job& job) const {
  TuneJobView view;
  view.id = job.id;
  view.entry = job.spec.entry;
  view.state = job.state;
  view.background = job.spec.background;
  view.cancel_requested = job.cancel.load();
  view.max_trials = job.spec.budget.max_trials;
  view.time_budget_s = job.spec.budget.max_seconds;
  view.seed = job.spec.budget.seed;
  view.trials = job.outcome ? job.outcome->trials : job.progress.trials.load();
  if (double us = job.progress.heuristic_us.load(); us >= 0) view.heuristic_us = us;
  if (double us = job.progress.best_us.load(); us >= 0) view.best_us = us;
  if (job.outcome) {
    view.heuristic_us = job.outcome->heuristic_us;
    if (job.outcome->accepted) view.best_us = job.outcome->tuned_us;
  }
  view.outcome = job.outcome;
  view.error = job.error;
  view.waiting_for_runs = job.state == TuneState::kRunning && job.progress.waiting_for_runs.load();
  view.created_ms = job.created_ms;
  view.finished_ms = job.finished_ms;
  view.takes_over = job.spec.takes_over;
  return view;
}

}  // namespace kiln::service
