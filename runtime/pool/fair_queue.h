// FairQueue: pending jobs, one FIFO per client, served round-robin across
// the clients that have work, so a client flooding the queue delays others
// by at most one job each turn.
//
// A job may ask for one chip kind ("" = any) or a slice ("v5e:2x4");
// Pop(kind) takes the next job, in round-robin order, that a chip of `kind`
// may run (PopIf: whose kind a predicate accepts), skipping (without
// reordering) clients whose queued jobs all need another kind. Pop and
// HasWorkFor may also be given an admission test (the pool's host-memory
// budget): jobs it refuses are skipped the same way and stay queued.
//
// Not thread-safe: the DevicePool guards it with its mutex.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::runtime::pool {

template <typename Job>
class FairQueue {
  struct AdmitAll {
    bool operator()(const Job&) const { return true; }
  };

 public:
  void Push(std::string client, std::string kind, Job job) {
    auto& queue = queues_[client];
    if (queue.empty()) rotation_.push_back(client);
    queue.push_back({std::move(kind), std::move(job)});
    ++size_;
  }

  // The next job a chip of `kind` may run and `admit` accepts, or nullopt.
  template <typename Admit = AdmitAll>
  std::optional<std::pair<std::string, Job>> Pop(std::string_view kind, const Admit& admit = {}) {
    return PopIf([kind](std::string_view k) { return k.empty() || k == kind; }, admit);
  }
  // The next job whose kind `runs(kind)` accepts and `admit` accepts.
  template <typename Runs, typename Admit = AdmitAll>
  std::optional<std::pair<std::string, Job>> PopIf(const Runs& runs, const Admit& admit = {}) {
    for (auto turn = rotation_.begin(); turn != rotation_.end(); ++turn) {
      auto& queue = queues_[*turn];
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (!runs(std::string_view(it->kind))) continue;
        if (!admit(it->job)) continue;
        std::pair<std::string, Job> out{*turn, std::move(it->job)};
        queue.erase(it);
        --size_;
        rotation_.erase(turn);
        if (queue.empty()) {
          queues_.erase(out.first);
        } else {
          rotation_.push_back(out.first);  // back of the line
        }
        return out;
      }
    }
    return std::nullopt;
  }

  // True when Pop(kind, admit) would return a job.
  template <typename Admit = AdmitAll>
  bool HasWorkFor(std::string_view kind, const Admit& admit = {}) const {
    return HasWorkIf([kind](std::string_view k) { return k.empty() || k == kind; }, admit);
  }
  // True when PopIf(runs, admit) would return a job.
  template <typename Runs, typename Admit = AdmitAll>
  bool HasWorkIf(const Runs& runs, const Admit& admit = {}) const {
    for (const auto& [client, queue] : queues_) {
      for (const Entry& e : queue) {
        if (runs(std::string_view(e.kind)) && admit(e.job)) return true;
      }
    }
    return false;
  }

  // Takes out every job `take(job)` is true for (cancelled, past their
  // deadline), keeping the others in order.
  template <typename Take>
  std::deque<std::pair<std::string, Job>> RemoveIf(const Take& take) {
    std::deque<std::pair<std::string, Job>> out;
    for (auto client = queues_.begin(); client != queues_.end();) {
      auto& queue = client->second;
      for (auto it = queue.begin(); it != queue.end();) {
        if (!take(it->job)) {
          ++it;
          continue;
        }
        out.emplace_back(client->first, std::move(it->job));
        it = queue.erase(it);
        --size_;
      }
      if (queue.empty()) {
        std::erase(rotation_, client->first);
        client = queues_.erase(client);
      } else {
        ++client;
      }
    }
    return out;
  }

  // Calls `visit(job)` for every queued job, in no particular order.
  template <typename Visit>
  void ForEach(const Visit& visit) const {
    for (const auto& [client, queue] : queues_) {
      for (const Entry& e : queue) visit(e.job);
    }
  }

  // Takes every queued job (for shutdown), in no particular order.
  std::deque<std::pair<std::string, Job>> Drain() {
    std::deque<std::pair<std::string, Job>> out;
    for (auto& [client, queue] : queues_) {
      for (Entry& e : queue) out.emplace_back(client, std::move(e.job));
    }
    queues_.clear();
    rotation_.clear();
    size_ = 0;
    return out;
  }

  size_t size() const { return size_; }
  // Queued jobs per client (clients with none are absent).
  std::map<std::string, size_t> Depths() const {
    std::map<std::string, size_t> out;
    for (const auto& [client, queue] : queues_) out[client] = queue.size();
    return out;
  }

 private:
  struct Entry {
    std::string kind;
    Job job;
  };
  std::map<std::string, std::deque<Entry>> queues_;
  std::deque<std::string> rotation_;  // clients with work, next to serve first
  size_t size_ = 0;
};

}  // namespace kiln::runtime::pool
