// DevicePool: N simulated chips shared by every client of the server.
//
// Clients Submit jobs; a job is a function that runs on one chip's worker
// thread (the executor and the timing simulator run inside it, so the pool
// does not care how execution is done) and returns the simulated device
// seconds it used. The pool keeps one job per chip at a time, queues the
// rest with round-robin fairness across clients (fair_queue.h), and
// delivers each completion by calling the job's `done` on the worker thread
// that ran it, after the chip is marked idle again.
//
// Failures: Submit refuses a job when the queue is full ("pool saturated",
// which the server maps to 503) or when no chip of the requested kind
// exists. A job whose declared HBM need exceeds the chip's HBM completes
// with an error without running; a job that returns an error (e.g. a step
// budget exceeded by a runaway loop) completes with that error. Either way
// the chip is free for the next job. A job that throws is reported as an
// error too; the worker survives. On destruction, queued jobs complete with
// "device pool shutting down" and running ones are waited for.
//
// Thread-safe: every method may be called from any thread, including from
// inside a job or a completion callback (but a job must not destroy its
// pool).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/hlo/status.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/pool/fair_queue.h"
#include "runtime/pool/pool_spec.h"

namespace kiln::runtime::pool {

// The chip a job runs on.
struct ChipContext {
  int index = 0;                    // position in the pool
  const ChipSpec* chip = nullptr;
  std::string group;                // "v5e:2x2"
};

struct JobStats {
  int chip = -1;              // chip index; -1 when the job never ran
  double queued_seconds = 0;  // host time from Submit to start
  double run_seconds = 0;     // host time on the chip
  double device_seconds = 0;  // simulated device time reported by the job
};

struct Job {
  std::string client;        // fairness key (API key, user, ...)
  std::string chip_kind;     // "v5e", ...; empty: any chip
  uint64_t hbm_bytes = 0;    // peak HBM + argument bytes the run needs
  // Runs on the chip's worker thread; returns simulated device seconds.
  std::function<Result<double>(const ChipContext&)> run;
  // Called exactly once (unless Submit fails), on a pool thread.
  std::function<void(Status status, const JobStats& stats)> done;
};

struct PoolOptions {
  size_t max_queued = 1024;  // Submit fails beyond this many waiting jobs
};

struct ChipStatus {
  int index = 0;
  std::string kind;          // "v5e"
  std::string group;         // "v5e:4"
  bool busy = false;
  std::string client;        // running job's client, when busy
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
  std::vector<ChipStatus> chips;
  double utilization = 0;    // mean over chips
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
  // unknown chip kind, queue full ("pool saturated: 1024 jobs queued").
  Status Submit(Job job);

  // A snapshot of the chips and the queue.
  PoolStatus status() const;
  const PoolSpec& spec() const { return spec_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    Job job;
    Clock::time_point submitted;
  };
  struct Chip {
    ChipContext context;
    ChipStatus status;
    std::thread worker;
  };

  DevicePool(PoolSpec spec, PoolOptions options);
  void WorkerLoop(Chip& chip);
  // Runs one job on `chip` (outside the lock) and returns its outcome.
  Status RunJob(const Chip& chip, Job& job, double& device_seconds);

  const PoolSpec spec_;
  const PoolOptions options_;
  const Clock::time_point started_;
  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  FairQueue<Pending> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Chip>> chips_;
};

}  // namespace kiln::runtime::pool
