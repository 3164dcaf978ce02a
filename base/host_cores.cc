#include "base/host_cores.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace kiln {
// Named, not anonymous: HostCores::State (external linkage) holds Batches.
namespace host_cores_internal {

// One ParallelFor call: parts handed out by `next`, finished ones counted
// by `done`.
struct Batch {
  const std::function<void(int64_t)>* part = nullptr;
  int64_t parts = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};

  void RunParts() {
    for (int64_t i = next.fetch_add(1); i < parts; i = next.fetch_add(1)) {
      (*part)(i);
      if (done.fetch_add(1) + 1 == parts) done.notify_all();
    }
  }
};

}  // namespace host_cores_internal
namespace {

using host_cores_internal::Batch;

// Whether the calling thread is already counted in in_use: it holds a lease,
// is a helper running parts, or is inside ParallelFor.
thread_local bool t_counted = false;

int CpusOfThisProcess() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

struct HostCores::State {
  explicit State(int total) : total(total) {}
  const int total;
  std::atomic<int> in_use{0};

  std::mutex mu;
  std::condition_variable wake;
  // One entry per borrowed core not yet taken up by a helper.
  std::deque<std::shared_ptr<Batch>> offers;
  int helpers = 0;  // helper threads started

  // Takes up to `want` idle cores; how many it took.
  int Borrow(int want) {
    int held = in_use.load();
    while (true) {
      const int take = std::min(want, total - held);
      if (take <= 0) return 0;
      if (in_use.compare_exchange_weak(held, held + take)) return take;
    }
  }

  void HelperLoop() {
    t_counted = true;
    std::unique_lock lock(mu);
    while (true) {
      wake.wait(lock, [&] { return !offers.empty(); });
      std::shared_ptr<Batch> batch = std::move(offers.front());
      offers.pop_front();
      lock.unlock();
      batch->RunParts();
      in_use.fetch_sub(1);
      lock.lock();
    }
  }
};

int HostCoreCount(int cpus, const char* kiln_host_threads) {
  if (kiln_host_threads != nullptr) {
    int value = 0;
    const char* end = kiln_host_threads + std::strlen(kiln_host_threads);
    auto [ptr, ec] = std::from_chars(kiln_host_threads, end, value);
    if (ec == std::errc() && ptr == end && value >= 1 && value <= 1024) return value;
  }
  return std::max(1, cpus);
}

HostCores& HostCores::Get() {
  // Never destroyed: helper threads may still wait on its state at exit.
  static HostCores* cores =
      new HostCores(HostCoreCount(CpusOfThisProcess(), std::getenv("KILN_HOST_THREADS")));
  return *cores;
}

HostCores::HostCores(int total) : state_(new State(total)) {}

int HostCores::total() const { return state_->total; }
int HostCores::in_use() const { return state_->in_use.load(); }

HostCores::Lease::Lease(Lease&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }

HostCores::Lease::~Lease() {
  if (owner_ == nullptr) return;
  owner_->state_->in_use.fetch_sub(1);
  t_counted = false;
}

HostCores::Lease HostCores::Hold() {
  if (t_counted) return Lease(nullptr);
  t_counted = true;
  state_->in_use.fetch_add(1);
  return Lease(this);
}

void HostCores::ParallelFor(int64_t parts, const std::function<void(int64_t)>& part) {
  if (parts <= 0) return;
  if (parts == 1) {
    part(0);
    return;
  }
  State& s = *state_;
  const bool counted_here = !t_counted;
  if (counted_here) {
    t_counted = true;
    s.in_use.fetch_add(1);
  }
  auto batch = std::make_shared<Batch>();
  batch->part = &part;
  batch->parts = parts;
  const int borrowed = s.Borrow(static_cast<int>(std::min<int64_t>(parts - 1, s.total)));
  if (borrowed > 0) {
    std::lock_guard lock(s.mu);
    // A helper per core that can be lent at once: total - 1, the caller
    // being one of the cores.
    while (s.helpers < s.total - 1) {
      std::thread([&s] { s.HelperLoop(); }).detach();
      ++s.helpers;
    }
    for (int i = 0; i < borrowed; ++i) s.offers.push_back(batch);
    s.wake.notify_all();
  }
  batch->RunParts();
  // Offers no helper has taken up yet are withdrawn, and their cores given
  // back; helpers that took one give theirs back when they run out of parts.
  if (borrowed > 0) {
    int withdrawn = 0;
    {
      std::lock_guard lock(s.mu);
      withdrawn = static_cast<int>(std::erase(s.offers, batch));
    }
    s.in_use.fetch_sub(withdrawn);
  }
  for (int64_t done = batch->done.load(); done < parts; done = batch->done.load()) {
    batch->done.wait(done);
  }
  if (counted_here) {
    s.in_use.fetch_sub(1);
    t_counted = false;
  }
}

}  // namespace kiln
