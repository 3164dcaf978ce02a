// DevicePool: N simulated chips shared by every client of the server.
//
// Clients Submit jobs; a job is a function that runs on one chip's worker
// thread (the executor and the timing simulator run inside it, so the pool
// does not care how execution is done) and returns the simulated device
// seconds it used. The pool keeps one job per chip at a time, queues the
// rest with round-robin fairness across clients (fair_queue.h), and
// delivers each completion by calling the job's `done` on the pool thread
// that ended it, after the chip is marked idle again.
//
// Limits. A job may carry a deadline and a `cancelled` probe; a watchdog
// thread ends a queued job that passes its deadline or is cancelled without
// running it, and stops a running one through its Interrupt (the evaluator
// checks it between instructions, runtime/eval/interrupt.h). A job may also
// declare the host memory it needs: with a budget (PoolOptions) the pool
// runs jobs only while their sum fits, keeps the others queued until memory
// frees, and ends one that waited longer than max_memory_wait (kMemoryBusy).
// Shutdown(by) refuses new jobs and stops every job still queued or running
// at `by`.
//
// Slices. A spec group with a topology ("v5e:2x4") is a slice: its chips
// run one-chip jobs like any other, and a job that asks for that topology
// gets all of them at once. The slice's first chip takes such jobs in its
// turn of the fair queue; it then keeps its other chips from starting new
// work, waits for their running jobs to end and runs the slice job, which
// sees ChipContext::chips and ::topology. Every chip of the slice counts the
// job's busy and device time.
//
// Failures: Submit refuses a job when the queue is full, when no chip of the
// requested kind (no slice of the requested topology) exists, when its host memory exceeds the whole budget or
// after Shutdown (the error's reason says which, kPoolSaturated and the
// others below). A job whose declared HBM need
// exceeds the chip's HBM completes with an error without running; a job that
// returns an error (e.g. a step budget exceeded by a runaway loop) completes
// with that error. Either way the chip is free for the next job. A job that
// throws is reported as an error too; the worker survives. On destruction
// the pool shuts down at once: queued jobs complete with "device pool
// shutting down", running ones are stopped and waited for.
//
// Thread-safe: every method may be called from any thread, including from
// inside a job or a completion callback (but a job must not destroy its
// pool).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/eval/interrupt.h"
#include "runtime/pool/fair_queue.h"
#include "runtime/pool/pool_spec.h"

namespace kiln::runtime::pool {

// The chip a job runs on; for a slice job, the first chip of its slice.
struct ChipContext {
  int index = 0;                    // position in the pool
  const ChipSpec* chip = nullptr;
  std::string group;                // "v5e:2x2"
  int chips = 1;                    // chips the job holds (the slice's, from index on)
  std::vector<int> topology;        // the slice's shape; empty for a one-chip job
};

using PoolClock = std::chrono::steady_clock;

// `d` in seconds, for stats and messages.
inline double ToSeconds(PoolClock::duration d) { return std::chrono::duration<double>(d).count(); }

// How a job ended.
enum class JobEnd : uint8_t {
  kCompleted,   // run returned a value
  kFailed,      // run returned an error or threw, or the chip lacks the HBM
  kCancelled,   // `cancelled` said so (queued: never ran)
  kDeadline,    // its deadline passed (queued: never ran)
  kShutdown,    // the pool shut down (queued: never ran)
  kMemoryBusy,  // queued longer than max_memory_wait for host memory
};
std::string_view JobEndName(JobEnd end);  // "completed", "deadline", ...
std::string FormatGiB(uint64_t bytes);     // "7.73 GiB", for messages

struct JobStats {
  int chip = -1;              // chip index; -1 when the job never ran
  JobEnd end = JobEnd::kCompleted;
  double queued_seconds = 0;  // host time from Submit to start (or to its end, if it never ran)
  double run_seconds = 0;     // host time on the chip
  double device_seconds = 0;  // simulated device time reported by the job
};

struct Job {
  std::string client;        // fairness key (API key, user, ...)
  std::string label;         // what it runs, for status (the executable's key); optional
  std::string chip_kind;     // "v5e", ...; empty: any chip (required with topology)
  // A slice job needs every chip of a pool slice of this shape ("v5e:2x4"
  // in the spec -> {2, 4}) at once; empty: one chip. The slice is
  // allocated whole: its chips take no other work until the job ends.
  std::vector<int> topology;
  uint64_t hbm_bytes = 0;    // peak HBM + argument bytes the run needs (per chip)
  uint64_t host_bytes = 0;   // host memory the run needs, held while it runs
  // The job must have ended by then; max(): no deadline.
  PoolClock::time_point deadline = PoolClock::time_point::max();
  // Polled by the watchdog (about every watch_interval) while the job is
  // queued or running; true cancels it. Must be cheap and must not call the
  // pool (it runs under the pool's lock). Optional.
  std::function<bool()> cancelled;
  // Raised by the pool when the job must stop; `run` should lend it to the
  // evaluator (EvalOptions::interrupt). Created by Submit when null.
  std::shared_ptr<runtime::Interrupt> interrupt;
  // Runs on the chip's worker thread; returns simulated device seconds.
  std::function<Result<double>(const ChipContext&)> run;
  // Called exactly once (unless Submit fails), on a pool thread.
  std::function<void(Status status, const JobStats& stats)> done;
};

struct PoolOptions {
  size_t max_queued = 1024;  // Submit fails beyond this many waiting jobs
  // Host memory the running jobs may hold together (Job::host_bytes);
  // 0: no budget.
  uint64_t host_memory_bytes = 0;
  // A queued job that does not fit the free host memory after this long
  // ends with kMemoryBusy (the server answers 503 with Retry-After).
  std::chrono::milliseconds max_memory_wait{10'000};
  // How often the watchdog polls Job::cancelled.
  std::chrono::milliseconds watch_interval{20};
};

// Why Submit refused a job: the error's reason, with its code. A job
// without run or done is refused as internal (a caller's bug).
inline constexpr std::string_view kChipNotInPool = "chip_not_in_pool";  // failed_precondition: no chip of the kind
inline constexpr std::string_view kPoolSaturated = "pool_saturated";    // unavailable: the queue is full
inline constexpr std::string_view kTooLargeToRun = "too_large_to_run";  // resource_exhausted: beyond the whole budget
inline constexpr std::string_view kDraining = "draining";               // unavailable: after Shutdown or in destruction

struct ChipStatus {
  int index = 0;
  std::string kind;          // "v5e"
  int kind_index = 0;        // its place among the pool's chips of its kind ("v5e:<kind_index>")
  std::string group;         // "v5e:4"
  bool busy = false;
  std::string client;        // running job's client, when busy
  std::string label;         // running job's label, when busy
  uint64_t jobs_run = 0;
  uint64_t jobs_failed = 0;
  double busy_seconds = 0;   // host time spent running jobs
  double device_seconds = 0; // simulated device time of its jobs
  double utilization = 0;    // busy_seconds / pool uptime
};

struct PoolStatus {
  std::string spec;          // "v5e:4,v6e:2"
  double uptime_seconds = 0;
  size_t queued = 0;
  std::map<std::string, size_t> queued_by_client;
  std::map<std::string, size_t> queued_by_kind;  // by Job::chip_kind ("" for any chip)
  std::vector<ChipStatus> chips;
  double utilization = 0;    // mean over chips
  uint64_t host_memory_budget = 0;   // PoolOptions::host_memory_bytes (0: none)
  uint64_t host_memory_in_use = 0;   // held by running jobs
  size_t waiting_for_memory = 0;     // queued jobs that do not fit the free memory now
  // Jobs ended other than by running to completion, since the pool started.
  uint64_t cancelled_total = 0;
  uint64_t deadline_total = 0;
  uint64_t memory_busy_total = 0;
  uint64_t memory_refused_total = 0;  // Submit refusals (kTooLarge)
};

class DevicePool {
 public:
  // Starts one worker thread per chip.
  static Result<std::unique_ptr<DevicePool>> Create(const PoolSpec& spec, PoolOptions options = {});
  // ParsePoolSpec + Create.
  static Result<std::unique_ptr<DevicePool>> Create(std::string_view spec, PoolOptions options = {});
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // Queues `job`; its `done` will be called later. Errors: missing run/done,
  // unknown chip kind, queue full ("pool saturated: 1024 jobs queued"),
  // host memory beyond the budget, shutting down (reasons above).
  Status Submit(Job job);

  // Refuses new jobs from now on; every job still queued or running at `by`
  // is ended with kShutdown (running ones through their Interrupt). Does not
  // wait. Calling it again can only bring `by` closer.
  void Shutdown(PoolClock::time_point by);

  // A snapshot of the chips and the queue.
  PoolStatus status() const;
  const PoolSpec& spec() const { return spec_; }

 private:
  using Clock = PoolClock;
  struct Pending {
    Job job;
    Clock::time_point submitted;
  };
  struct Chip {
    ChipContext context;
    ChipStatus status;
    Pending* running = nullptr;  // guarded by mu_; the job on the chip
    std::thread worker;
    // Slices: the label its slice jobs queue under ("v5e:2x4") and the
    // slice's chips, on the slice's first chip only; `reserved` (guarded by
    // mu_) keeps a chip from starting work while its slice gathers.
    std::string slice_kind;
    std::vector<Chip*> slice;
    bool reserved = false;
    bool in_slice = false;  // one of a slice's chips
  };
  struct Ended {
    Pending pending;
    JobEnd end;
    std::string message;
  };

  DevicePool(PoolSpec spec, PoolOptions options);
  void WorkerLoop(Chip& chip);
  // Runs one job on `chip` (outside the lock) and returns its outcome.
  Status RunJob(const Chip& chip, const ChipContext& context, Job& job, double& device_seconds);
  // For a slice job on `leader`: reserves the slice's other chips and waits
  // (lock held) until none runs a job or the pool stops. Returns the
  // context the job runs with.
  ChipContext GatherSlice(Chip& leader, std::unique_lock<std::mutex>& lock);
  // Marks the chips a job held idle and counts its time; a slice job's end
  // also lifts its slice's reservation (mu_ held).
  void ReleaseChips(const std::vector<Chip*>& chips, bool slice_job, const JobStats& stats, bool failed);
  // device_pool_watchdog.cc: deadlines, cancellation, memory waits, shutdown.
  void WatchdogLoop();
  // Takes out the queued jobs that must end now and stops the running ones
  // that must; returns when to look again. Called with mu_ held.
  Clock::time_point Sweep(Clock::time_point now, std::deque<Ended>& ended);
  // The reason a job must stop at `now`, or kNone. Called with mu_ held.
  StopReason DueReason(const Job& job, Clock::time_point now) const;
  bool FitsMemory(const Job& job) const;  // with mu_ held
  void Finish(Ended ended);               // calls done; without mu_
  std::string MemoryFigures(uint64_t need) const;  // with mu_ held

  const PoolSpec spec_;
  const PoolOptions options_;
  const Clock::time_point started_;
  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable watch_;  // wakes the watchdog
  FairQueue<Pending> queue_;
  bool stopping_ = false;                                   // destructor: threads exit
  Clock::time_point shutdown_at_ = Clock::time_point::max();  // Shutdown(by)
  bool shutting_down_ = false;
  uint64_t host_in_use_ = 0;
  uint64_t cancelled_total_ = 0;
  uint64_t deadline_total_ = 0;
  uint64_t memory_busy_total_ = 0;
  uint64_t memory_refused_total_ = 0;
  std::vector<std::unique_ptr<Chip>> chips_;
  std::thread watchdog_;
};

}  // namespace kiln::runtime::pool
