// TuneLeases: a fleet's tuning jobs in the shared tier, so that one server
// at a time tunes an entry and every server can list what the fleet tunes.
//
// Layout in Redis (PREFIX = SharedTier::KeyPrefix(id), so an entry's lease
// and marker live in its hash slot):
//   PREFIX:tune        the tuning lease: "TOKEN\nRECORD" (TuneRecord), SET NX
//                      PX lease_ttl (the tier's --shared-lease), rewritten
//                      every lease_ttl/3 by this class's own thread while it
//                      is held, whatever the tuner is doing; deleted only by
//                      its holder (the token compared in Lua). A lease with
//                      no TTL or one longer than lease_ttl is no live
//                      kiln's and is taken at once.
//   PREFIX:tune:done   the finished marker: the RECORD of the job that ended
//                      (state done, failed or cancelled), PX finished_ttl,
//                      written by the script that deletes the lease.
//   kiln:tune:jobs:TENANT  a hash, field PREFIX -> "TOKEN\nRECORD": the
//                      tenant's listed jobs (one key, one slot), written when
//                      a lease is taken and at every renewal, expiring
//                      listing_ttl after its last write. A listed job whose
//                      lease is gone has finished (marker there: pruned) or
//                      lost its server (an orphan, for another server to
//                      take over; pruned orphan_keep after it was queued).
//   kiln:tune:tenants  a set of the tenants with listed jobs (what a
//                      takeover scan walks), listing_ttl after its last write.
// Tenants never share a job key (the tenant is in the prefix and in the
// listing's name); only servers, never API callers, read the tenants set.
//
// Who owns what: a Lease is owned by whoever runs the job (a tuning job's
// hold, fleet_tuning.h); its end (End, HandOver, or its destruction) is
// queued to this class's thread and never blocks the caller, so it may be
// called under the caller's locks. A failed end is retried until
// kEndRetry has passed (then the lease lapses on its own).
//
// Failure: every call goes through SharedTier::Run (its backoff and
// health): while Redis is down calls fail fast with Unavailable (reason
// shared_unavailable) and the caller tunes locally. A renewal that finds
// the lease gone takes it again; one that finds another holder's marks the
// Lease lost() (another server took the job over while Redis was slow).
//
// Thread-safe. Owns one thread (renewals and queued ends). The tier must
// outlive it, and it must outlive every Lease it handed out; the
// destructor runs the queued ends (best effort) and stops the thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/entry.h"
#include "cache/shared/shared_tier.h"

namespace kiln::cache::shared {

// One job as the fleet sees it: what it tunes, who runs it, its budget.
struct TuneRecord {
  EntryId entry;
  std::string server;            // who runs it: "host:port"
  std::string job_id;            // its id on that server (16 hex digits)
  std::string state = "queued";  // queued, running; in a marker: done, failed, cancelled
  bool background = false;
  int64_t max_trials = 0;  // 0: none
  double max_seconds = 0;  // 0: the server's default
  uint64_t seed = 0;
  int64_t created_ms = 0;  // unix ms, when it was queued
  std::string takes_over;  // the job id of the job whose server died, when it took one over
};

// "k=v" fields separated by tabs (tabs and newlines in values become
// spaces). Decode fails (invalid_argument) on a record without an entry.
std::string EncodeTuneRecord(const TuneRecord& record);
Result<TuneRecord> DecodeTuneRecord(std::string_view text);

// A listed job and whether its lease is live.
struct FleetTuneJob {
  TuneRecord record;         // the lease's while live, else the listing's
  std::string holder_token;  // the live lease's token (empty when orphaned)
  std::string listed_value;  // the listing's value (for Unlist)
  bool live = false;         // false: an orphan (no lease, no marker)
  std::chrono::milliseconds lease_left{0};
};

struct TuneLeaseOptions {
  std::chrono::milliseconds finished_ttl{std::chrono::hours(1)};
  std::chrono::milliseconds listing_ttl{std::chrono::hours(24)};
  std::chrono::milliseconds orphan_keep{std::chrono::hours(24)};
};

class TuneLeases {
 public:
  // How long a queued end is retried while Redis fails.
  static constexpr std::chrono::minutes kEndRetry{5};

  TuneLeases(SharedTier& tier, TuneLeaseOptions options = {});
  ~TuneLeases();
  TuneLeases(const TuneLeases&) = delete;
  TuneLeases& operator=(const TuneLeases&) = delete;

  // A held tuning lease. Destroyed without End or HandOver, it is
  // abandoned: the lease and the listing entry are deleted, no marker
  // (the job never ran: it was refused a place in the queue).
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    const std::string& token() const { return token_; }
    // Another holder's lease was found at a renewal.
    bool lost() const { return lost_->load(); }
    // The job's state ("running"): written now (best effort), and at every
    // renewal after.
    void SetState(std::string_view state);
    // The job ended: the marker (with `state`), the lease and the listing
    // entry go, queued. Once; later calls do nothing.
    void End(std::string_view state);
    // The job stops without ending (its server shuts down): the lease goes,
    // the listing entry stays, so another server takes the job over at once.
    void HandOver();

   private:
    friend class TuneLeases;
    Lease(TuneLeases* owner, std::string token, std::shared_ptr<std::atomic<bool>> lost)
        : owner_(owner), token_(std::move(token)), lost_(std::move(lost)) {}
    TuneLeases* owner_;
    std::string token_;
    std::shared_ptr<std::atomic<bool>> lost_;
    bool ended_ = false;
  };

  // The lease for `record.entry`, taken and listed; else the job of the
  // live server that holds it (whose holder_token may be this class's own:
  // see Holds).
  struct Claim {
    std::unique_ptr<Lease> lease;
    std::optional<FleetTuneJob> holder;
  };
  Result<Claim> TryClaim(const TuneRecord& record);

  // The marker of the entry's job that ended within finished_ttl.
  Result<std::optional<TuneRecord>> Finished(const EntryId& id);
  // The tenant's listed jobs: live ones and orphans. Prunes on the way the
  // finished ones, unreadable values and orphans past orphan_keep.
  Result<std::vector<FleetTuneJob>> List(const std::string& tenant);
  // The tenants with listed jobs.
  Result<std::vector<std::string>> Tenants();
  // Drops `job` from its listing unless it was rewritten since it was read.
  Status Unlist(const FleetTuneJob& job);
  // Whether `token` is a lease this object holds now.
  bool Holds(const std::string& token) const;

  static std::string LeaseKey(const EntryId& id);
  static std::string MarkerKey(const EntryId& id);
  static std::string ListingKey(const std::string& tenant);
  static constexpr const char* kTenantsKey = "kiln:tune:tenants";

 private:
  struct Held {
    TuneRecord record;
    std::shared_ptr<std::atomic<bool>> lost;
  };
  enum class EndKind { kEnd, kHandOver, kAbandon };
  struct PendingEnd {
    EndKind kind;
    TuneRecord record;  // state set to how it ended
    std::string token;
    std::chrono::steady_clock::time_point give_up;
  };

  void Ending(const std::string& token, EndKind kind, std::string_view state);
  void UpdateState(const std::string& token, std::string_view state);
  // One renewal of a held lease: the lease rewritten (or taken again when
  // gone), then its listing. False when another holder has it.
  Result<bool> Renew(const std::string& token, const TuneRecord& record);
  Status WriteListing(const std::string& token, const TuneRecord& record);
  // Runs one queued end; false when Redis failed (retry).
  bool RunEnd(const PendingEnd& end);
  void Loop();

  SharedTier& tier_;
  const TuneLeaseOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Held> held_;  // by token; guarded by mu_
  std::deque<PendingEnd> ends_;       // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  std::thread thread_;
};

}  // namespace kiln::cache::shared
