// FleetTuning: the tuning jobs of the servers sharing one shared tier, for
// TuneService: one server at a time tunes an entry, every server lists the
// others' running jobs, and a job whose server died is taken over.
//
// A job's entry lease (cache/shared/tune_lease.h) goes with its hold
// (FleetHold, a TuneJobHold in the job's spec), which TuneJobs drops when
// the job ends. A requested job takes the lease when it is queued (Claim,
// on the request's thread): a queued job is already the fleet's tuning of
// the entry, so a request to another server answers it instead of
// queueing a second search. A background job (queued by a compile miss)
// takes it when it starts, so compile threads never wait on Redis; it is
// skipped when another server runs the entry's tuning or one ended (done
// or failed, not cancelled) within the finished marker's TTL. At the start (Admit) a held lease's record
// says running; a job without one (Redis was down, or a background job)
// tries to take it and is refused, counted as skipped, when another live
// server holds it. The end writes the finished marker; a shutdown instead
// hands the job over (the lease goes, the listing stays) so another server
// takes it over at once. A lease lost while Redis was slow does not stop
// a running job (as with compiles, two may then run).
//
// Takeover: a thread walks the fleet's listing every scan_interval; an
// orphan (lease lapsed, no finished marker) this server does not hold goes
// to `take_over` (TuneService checks the entry and queues the job with
// ClaimOrphan's hold).
//
// Failure: Redis down or slow never fails a caller: Claim answers a hold
// without a lease (the job runs here), List and Find answer nothing.
//
// Thread-safe. Owns the TuneLeases and the scan thread (StartScan; joined
// by StopScan or the destructor). Holds must be dropped before it is
// destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/shared/shared_tier.h"
#include "cache/shared/tune_lease.h"
#include "server/service/tune_jobs.h"

namespace kiln::service {

// Why a job did not run here: another server runs (or ran) its tuning.
inline constexpr std::string_view kTunedElsewhere = "tuned_elsewhere";

class FleetTuning;

// A job's share of the fleet: its lease, or the right to try for one at
// its start.
class FleetHold final : public TuneJobHold {
 public:
  FleetHold(FleetTuning& fleet, cache::shared::TuneRecord record,
            std::unique_ptr<cache::shared::TuneLeases::Lease> lease, bool skip_if_finished);
  Status Admit() override;
  void Ended(TuneState state) override;
  // Gives the lease up keeping the listing: another server (or the next
  // scan) takes the job over. For a takeover that could not be queued.
  void HandOver();

 private:
  FleetTuning& fleet_;
  const bool skip_if_finished_;
  std::mutex mu_;
  cache::shared::TuneRecord record_;                         // guarded by mu_
  std::unique_ptr<cache::shared::TuneLeases::Lease> lease_;  // guarded by mu_; null: none held
};

class FleetTuning {
 public:
  using TakeOver = std::function<void(const cache::shared::FleetTuneJob& orphan)>;

  // `server_name`: this server's in the records it writes (set_server_name
  // changes it).
  FleetTuning(cache::shared::SharedTier& tier, std::string server_name, std::chrono::milliseconds scan_interval);
  ~FleetTuning();
  FleetTuning(const FleetTuning&) = delete;
  FleetTuning& operator=(const FleetTuning&) = delete;

  // This server's name in the fleet's records ("host:port").
  void set_server_name(std::string name);
  std::string server_name() const;

  void StartScan(TakeOver take_over);  // once
  void StopScan();                     // joins the scan; idempotent

  struct Decision {
    std::shared_ptr<FleetHold> hold;       // queue the job with it
    std::optional<TuneJobView> elsewhere;  // or do not: another server runs it
  };
  // For a requested job about to be queued (spec.id set).
  Decision Claim(const TuneJobSpec& spec, int64_t created_ms);
  // For a background job: a hold that takes the lease when the job starts.
  std::shared_ptr<FleetHold> ClaimAtStart(const TuneJobSpec& spec, int64_t created_ms);
  // The lease over an orphan, for the job that takes it over (spec.id and
  // spec.takes_over set); null when another server took it first or Redis
  // failed.
  std::shared_ptr<FleetHold> ClaimOrphan(const TuneJobSpec& spec, int64_t created_ms);
  // Drops an orphan that must not run again (its entry is tuned already).
  void Prune(const cache::shared::FleetTuneJob& orphan);

  // The tenant's live jobs run by other servers (empty when Redis fails).
  std::vector<TuneJobView> List(const std::string& tenant);
  // The tenant's live fleet job `id`, or the one that took job `id` over
  // (this server's own included).
  std::optional<TuneJobView> Find(const std::string& tenant, const std::string& id);

  // From now on a job that ends cancelled hands its lease over.
  void BeginShutdown() { shutting_down_ = true; }
  bool shutting_down() const { return shutting_down_; }

  int64_t skipped() const { return skipped_; }
  int64_t takeovers() const { return takeovers_; }
  void CountSkipped() { skipped_++; }
  void CountTakeover() { takeovers_++; }

  cache::shared::TuneLeases& leases() { return leases_; }
  TuneJobView ViewOf(const cache::shared::TuneRecord& record) const;

 private:
  cache::shared::TuneRecord RecordOf(const TuneJobSpec& spec, int64_t created_ms) const;
  void ScanLoop();
  void ScanOnce();

  cache::shared::TuneLeases leases_;
  const std::chrono::milliseconds scan_interval_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<int64_t> skipped_{0};
  std::atomic<int64_t> takeovers_{0};

  mutable std::mutex mu_;
  std::string server_name_;  // guarded by mu_
  TakeOver take_over_;       // set once by StartScan
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread scanner_;
};

// A new job id (16 lowercase hex digits), for a job the fleet lists before
// it is queued.
std::string NewTuneJobId();

}  // namespace kiln::service
