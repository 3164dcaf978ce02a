// The host's cores, shared by the threads that run simulated chips and by
// the large kernels that borrow the cores those threads leave idle.
//
// A thread that runs a chip's program holds a core for as long as it runs
// (HostCores::Hold, e.g. the device pool's workers and a slice's per-chip
// threads). A kernel with independent parts (a dot's output tiles, a
// convolution's patch blocks) calls ParallelFor: the calling thread runs
// parts itself and, for the call's duration, borrows helper threads for as
// many cores as nothing else holds at that moment. So a pool whose chips
// are all busy runs every kernel on its own core as before, and a lone
// chip's kernel spreads over the idle ones. Borrowing never waits: a call
// that finds no idle core runs every part on the calling thread.
//
// Results must not depend on how many threads ran: callers split work into
// parts by its shape alone, and each part writes only its own output.
//
// The core count is the CPUs this process may run on, or KILN_HOST_THREADS
// when set (1 turns borrowing off; a benchmark sets it to compare one core
// with all). Thread-safe: every function may be called from any thread;
// parts run concurrently and must not throw.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln {

class HostCores {
 public:
  // The process's instance; its helper threads start on first borrow and
  // live until exit.
  static HostCores& Get();

  // Cores this process schedules work onto.
  int total() const;
  // Cores held now (leases and borrowed helpers, and the callers of
  // ParallelFor that hold no lease).
  int in_use() const;

  // Marks the calling thread busy on one core while the lease lives. Never
  // waits (more leases than cores oversubscribe, as threads do). A lease
  // taken on a thread that already holds one does nothing. Destroy it on
  // the thread that took it.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();

   private:
    friend class HostCores;
    explicit Lease(HostCores* owner) : owner_(owner) {}
    HostCores* owner_;  // nullptr when this lease holds nothing
  };
  Lease Hold();

  // Runs part(i) for every i in [0, parts) and returns once all have run:
  // on the calling thread, plus up to parts - 1 helpers for cores idle now.
  // Parts are handed out in order, one at a time, to whichever thread is
  // free. A part may itself call ParallelFor (it then borrows only what is
  // still idle).
  void ParallelFor(int64_t parts, const std::function<void(int64_t)>& part);

  HostCores(const HostCores&) = delete;
  HostCores& operator=(const HostCores&) = delete;

 private:
  explicit HostCores(int total);
  ~HostCores() = default;
  struct State;
  State* state_;  // lives for the whole process (helpers may outlive statics)
};

// Cores for a process from the CPUs it may run on and a KILN_HOST_THREADS
// value (null when unset): the value when it is a whole number from 1 to
// 1024, else the CPUs (at least 1).
int HostCoreCount(int cpus, const char* kiln_host_threads);

}  // namespace kiln
