// TuneJobs: the server's autotuning jobs (POST/GET/DELETE /v1/tune): a
// bounded queue, worker threads (one by default: one tuning at a time) and
// a table of jobs by id, per tenant.
//
// A job is what to tune (TuneJobSpec) and a Work function that tunes it on
// a worker thread, reporting progress through TuneProgress and polling
// `cancelled` (a DELETE, or shutdown) between trials. States: queued ->
// running -> done | failed | cancelled; a queued job that is cancelled never
// runs. At most one job per tenant and entry is queued or running: Submit
// of the same entry answers that job instead of queueing another.
//
// A job may carry a hold (TuneJobHold: the fleet's tuning lease), which
// may refuse its start (another server runs the same tuning) and is told
// when it ends; a refused job ends cancelled and counts as none of done,
// failed or cancelled, so the ended counts are the tunings run here.
//
// Jobs are seen only by their tenant: Find and Cancel of another tenant's
// id answer as for an unknown id. Finished jobs are kept for GET until
// `finished_kept` newer ones have finished, without their module text
// (dropped when a job ends, so kept jobs cost a few hundred bytes each).
//
// Fairness between tenants: one tenant may have at most
// `tenant_queued` jobs waiting and `tenant_budget_s` seconds of time budget
// queued or running, so no tenant can fill the queue; a free worker takes
// the oldest job of the tenant whose last job started longest ago (round
// robin), so a tenant waits behind at most one job of each other tenant.
// Every job has a time budget of at most `job_budget_s` (a job asking for
// trials only gets that one).
//
// Failures: Submit refuses with unavailable (reason tune_queue_full,
// Retry-After) when `queue_capacity` jobs wait, with resource_exhausted
// (reason tune_quota_exceeded, 429, Retry-After) past the tenant's share,
// invalid_argument (invalid_budget) for a time budget over job_budget_s,
// and with unavailable (draining) after Shutdown. Cancel of an unknown id is not_found; of a
// finished job failed_precondition (reason job_finished). A Work error of
// code cancelled ends the job cancelled; any other ends it failed with the
// error's text.
//
// Thread-safe. The destructor (or Shutdown) cancels every job, waits for
// the running ones to stop (one trial at most) and joins the workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cache/entry.h"
#include "compiler/autotune/progress_runner.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"

namespace kiln::service {

enum class TuneState : uint8_t { kQueued, kRunning, kDone, kFailed, kCancelled };
std::string_view TuneStateName(TuneState state);  // "queued", "running", ...

inline constexpr std::string_view kTuneQueueFull = "tune_queue_full";  // unavailable
inline constexpr std::string_view kJobFinished = "job_finished";       // failed_precondition
inline constexpr std::string_view kTuneQuotaExceeded = "tune_quota_exceeded";  // resource_exhausted (429)
inline constexpr std::string_view kInvalidBudget = "invalid_budget";           // invalid_argument

// What a job holds while it is queued or running: the fleet's tuning lease
// (fleet_tuning.h). Admit runs on the worker, unlocked, just before the
// work: an error ends the job cancelled with that error before it runs,
// counted in none of the ended counts (the job never ran here). Ended is
// called once when the job ends (under TuneJobs' lock: it must not block).
class TuneJobHold {
 public:
  virtual ~TuneJobHold() = default;
  virtual Status Admit() = 0;
  virtual void Ended(TuneState state) = 0;
};

// What a job tunes: a stored entry and the module it was compiled from.
struct TuneJobSpec {
  cache::EntryId entry;            // tenant, key, chip, format version
  // The module's HLO text; empty: the job reads the entry's own from the
  // store when it starts. Dropped when the job ends.
  std::string hlo;
  driver::CompileOptions options;  // as the entry was compiled (plan heuristic)
  autotune::TuneOptions budget;    // seed and budget; `cancelled` is set by the job
  bool background = false;         // queued by --tune-in-background after a miss
  // The job's id, when the caller chose it (the fleet lists a job before it
  // is queued); empty, or taken already: a new one.
  std::string id;
  std::string takes_over;  // the fleet job whose server died, when this job took it over
  std::shared_ptr<TuneJobHold> hold;  // null: none; dropped when the job ends
};

// Progress a running job's Work publishes (any thread may read it): the
// tuner's (autotune::ProgressRunner fills it) and the pauses for executes.
struct TuneProgress : autotune::Progress {
  std::atomic<bool> waiting_for_runs{false};  // paused while the pool runs executes
};

// How a job's Work ended when it did not fail.
struct TuneOutcome {
  int64_t trials = 0;
  double heuristic_us = 0;
  double tuned_us = 0;
  bool accepted = false;  // the tuner accepted a faster plan
  bool stored = false;    // ... and it replaced the entry
  std::string decision;   // why (the tuner's, and the store's when it was not stored)
  std::string verification;  // how the accepted plan's values were checked (TuneResult::verification)
  int64_t verified_kernels = 0;
  double tiling_gain_us = 0;  // the gain split: tiles of the heuristic's kernels, then fusion
  double fusion_gain_us = 0;  // in the entry
  double body_gain_us = 0;    // in loop bodies and branches
  double schedule_gain_us = 0;  // the kernels' order (collectives hidden behind compute)
};

// A job as GET /v1/tune/{id} shows it.
struct TuneJobView {
  std::string id;
  cache::EntryId entry;
  TuneState state = TuneState::kQueued;
  bool background = false;
  bool cancel_requested = false;
  int64_t max_trials = 0;      // 0: no trial limit
  double time_budget_s = 0;    // 0: no time limit
  uint64_t seed = 0;
  int64_t trials = 0;
  std::optional<double> heuristic_us;
  std::optional<double> best_us;
  std::optional<TuneOutcome> outcome;  // done
  std::optional<std::string> error;    // failed or cancelled: why
  bool waiting_for_runs = false;
  int64_t created_ms = 0;
  std::optional<int64_t> finished_ms;
  // Who runs it ("host:port"; TuneService fills it in), and the fleet job
  // it took over, if any.
  std::string server;
  std::string takes_over;
};

// Totals for /metrics.
struct TuneCounts {
  int64_t queued = 0;
  int64_t running = 0;
  int64_t done = 0;       // since start
  int64_t failed = 0;
  int64_t cancelled = 0;
  int64_t dropped = 0;    // background submissions refused (queue full)
  int64_t trials = 0;     // of finished jobs
  double saved_us = 0;    // sum of heuristic_us - tuned_us over stored tunings
  uint64_t text_bytes = 0;  // module text the queued and running jobs hold
  double seconds = 0;       // wall time the finished jobs ran (tuning, not compiling)
  // The fleet's (TuneService fills them in): jobs not run here because
  // another server runs or ran them, and jobs taken over from a server
  // that went away.
  int64_t fleet_skipped = 0;
  int64_t fleet_takeovers = 0;
};

class TuneJobs {
 public:
  using Work = std::function<Result<TuneOutcome>(const TuneJobSpec& spec, TuneProgress& progress,
                                                 const std::function<bool()>& cancelled)>;
  struct Options {
    int workers = 1;
    size_t queue_capacity = 16;
    size_t finished_kept = 1024;
    // One tenant's share (see above).
    size_t tenant_queued = 4;
    double tenant_budget_s = 3600;
    double job_budget_s = 1800;
    // The clock jobs are stamped with (base/clock.h); the system clock
    // when unset.
    UnixClock clock = nullptr;
  };

  TuneJobs(Options options, Work work);
  ~TuneJobs();
  TuneJobs(const TuneJobs&) = delete;
  TuneJobs& operator=(const TuneJobs&) = delete;

  struct Submitted {
    TuneJobView job;
    bool created = false;  // false: the entry's queued or running job
  };
  Result<Submitted> Submit(TuneJobSpec spec);
  // The tenant's queued or running job for `key` (any chip), if any.
  std::optional<TuneJobView> Active(const std::string& tenant, const hlo::Hash128& key) const;
  std::optional<TuneJobView> Find(const std::string& tenant, const std::string& id) const;
  // The tenant's jobs still held (queued, running, and the finished ones
  // kept), newest first, at most `limit`.
  std::vector<TuneJobView> List(const std::string& tenant, size_t limit) const;
  // A queued job ends cancelled at once; a running one is asked to stop and
  // ends cancelled after its current trial (unless it finished first).
  Result<TuneJobView> Cancel(const std::string& tenant, const std::string& id);
  // Counts a background submission that was refused.
  void Dropped();
  TuneCounts counts() const;

  // Refuses new jobs and cancels every queued and running one; does not
  // wait. The destructor waits.
  void BeginShutdown();

 private:
  struct Job {
    std::string id;
    TuneJobSpec spec;
    TuneState state = TuneState::kQueued;
    std::atomic<bool> cancel{false};
    TuneProgress progress;
    std::optional<TuneOutcome> outcome;
    std::optional<std::string> error;
    int64_t created_ms = 0;
    std::optional<int64_t> finished_ms;
    double run_seconds = 0;  // how long its Work ran
    bool refused = false;    // its hold refused the start: never ran, never counted
  };

  void WorkerLoop();
  // The queued job a free worker takes next (round robin over tenants);
  // queue_ must not be empty. mu_ held.
  std::deque<std::shared_ptr<Job>>::iterator NextJob();
  // Seconds of time budget `tenant` has queued or running. mu_ held.
  double TenantBudgetSeconds(const std::string& tenant) const;
  void Finish(Job& job, TuneState state);  // mu_ held
  void Count(const Job& job, TuneState state);  // adds an ended job to counts_; mu_ held
  TuneJobView ViewOf(const Job& job) const;  // mu_ held
  std::string NewId();                        // mu_ held
  int64_t NowMs() const;

  const Options options_;
  const Work work_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;                                 // guarded by mu_
  std::map<std::string, std::shared_ptr<Job>> jobs_;      // by id; guarded by mu_
  std::deque<std::shared_ptr<Job>> queue_;                // guarded by mu_
  std::deque<std::string> finished_order_;                // guarded by mu_
  TuneCounts counts_;                                     // finished figures; guarded by mu_
  std::mt19937_64 ids_;                                   // guarded by mu_
  std::map<std::string, uint64_t> tenant_started_;        // tenant -> start sequence of its last job; guarded by mu_
  uint64_t starts_ = 0;                                   // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace kiln::service
