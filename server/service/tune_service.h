// TuneService: autotuning of stored entries, and the swap of what it finds.
//
// Start queues a job (tune_jobs.h) for a stored entry, named by the module's
// text (its key computed as a compile would) or by its key alone (the text
// the store keeps beside the entry is tuned). A job runs the tuner on the
// timing simulator (tune_runner.h), giving way to the pool's runs before
// each kernel it times or evaluates (tune_gate.h), with its records in the
// store (tune_records.h); when the tuner accepts a faster plan, the tuned
// executable replaces the entry under the same key, in one transaction and
// only if the entry is still the one the job started from (tuned_entry.h);
// then `forget` drops the in-memory copies of the old bytes and `publish`
// sends the new ones to the shared tier. QueueBackground is the job a
// compile miss gets with `--tune-in-background`.
//
// With a shared tier (options.shared), tuning is once per fleet
// (fleet_tuning.h): a requested job takes the entry's tuning lease when it
// is queued, and Start answers the job another live server runs instead
// (created false, the view's `server` naming it); a background job takes
// the lease when it starts and is skipped when another server runs or ran
// the entry's tuning; List adds the other servers' running jobs and Find
// finds them; a scan takes over the jobs of servers that died (for
// entries stored here that are not tuned already, locally or in Redis,
// with the module text from the store or the shared entry). Redis down:
// tuning goes on locally.
//
// Failures of Start carry API codes: module_reader.h's, 400 key_mismatch
// (the key given is not the module's), 404 (no such stored entry), 400
// hlo_required (the store keeps no text for the key), invalid_options (an
// entry not compiled with the heuristic plan), and TuneJobs::Submit's.
// Thread-safe; the destructor cancels every job and waits for the running
// ones (one trial at most).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/cache_store.h"
#include "compiler/autotune/tuner.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"
#include "cache/shared/shared_tier.h"
#include "server/service/fleet_tuning.h"
#include "server/service/stored_entries.h"
#include "server/service/tune_gate.h"
#include "server/service/tune_jobs.h"

namespace kiln::service {

// What to tune: the module's text (with the options to compile it with),
// its key, or both (then the key must be the module's).
struct TuneStart {
  std::string tenant;
  std::optional<std::string> hlo;
  std::optional<hlo::Hash128> key;
  driver::CompileOptions options;
  autotune::TuneOptions budget;
};

struct TuneServiceOptions {
  int workers = 1;
  size_t queue_capacity = 16;
  double background_seconds = 0;  // budget of a background job
  // The shared tier (borrowed; null: none): tuning once per fleet.
  cache::shared::SharedTier* shared = nullptr;
};

class TuneService {
 public:
  // `forget` drops every in-memory copy of an entry; `publish` sends a
  // changed entry to the shared tier (may be null).
  TuneService(cache::CacheStore& store, StoredEntries& entries, TuneGate& gate, TuneServiceOptions options,
              std::function<void(const cache::EntryId&)> forget,
              std::function<void(const cache::BundleEntry&)> publish);
  ~TuneService();
  TuneService(const TuneService&) = delete;
  TuneService& operator=(const TuneService&) = delete;

  // A new job (created) or the entry's job already queued or running.
  Result<TuneJobs::Submitted> Start(TuneStart start);
  // Queues a background job for an entry a miss just stored; dropped (and
  // counted) when the queue is full.
  void QueueBackground(const cache::EntryId& id, const driver::CompileOptions& options);

  // A job of this server's, or of the fleet's (another server's running
  // job, or the one that took job `id` over).
  std::optional<TuneJobView> Find(const std::string& tenant, const std::string& id) const;
  // This server's jobs and the fleet's running ones, newest first.
  std::vector<TuneJobView> List(const std::string& tenant, size_t limit) const;
  // This server's jobs only (another server's job: not_found, naming it).
  Result<TuneJobView> Cancel(const std::string& tenant, const std::string& id);
  TuneCounts counts() const;

  // This server's name in its jobs and the fleet's records ("host:port";
  // until set, "host:pid").
  void set_server_name(std::string name);
  std::string server_name() const;

  // Refuses new jobs and cancels every one (a fleet job's lease is handed
  // over, so another server takes it over at once); does not wait.
  void BeginShutdown();

 private:
  // Queues `spec` here, unless (with a fleet) another server runs it.
  Result<TuneJobs::Submitted> Submit(TuneJobSpec spec);
  // The scan's: runs `orphan` here when this server can (fleet_tuning.h).
  void TakeOver(const cache::shared::FleetTuneJob& orphan);
  TuneJobView Here(TuneJobView view) const;  // with this server's name
  // A job's work, on a tuning worker (TuneJobs::Work).
  Result<TuneOutcome> Run(const TuneJobSpec& spec, TuneProgress& progress, const std::function<bool()>& cancelled);

  cache::CacheStore& store_;
  StoredEntries& entries_;
  TuneGate& gate_;
  const TuneServiceOptions options_;
  const std::function<void(const cache::EntryId&)> forget_;
  const std::function<void(const cache::BundleEntry&)> publish_;
  mutable std::mutex name_mu_;
  std::string server_name_;             // guarded by name_mu_
  std::unique_ptr<FleetTuning> fleet_;  // null without a shared tier; its scan stops before jobs_ goes
  std::unique_ptr<TuneJobs> jobs_;      // last: its workers use the rest
};

}  // namespace kiln::service
