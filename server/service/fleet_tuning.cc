#include "server/service/fleet_tuning.h"

#include <cstdio>
#include <random>

namespace kiln::service {
namespace {

using cache::shared::FleetTuneJob;
using cache::shared::TuneRecord;

TuneState FleetStateOf(std::string_view state) {
  for (TuneState known :
       {TuneState::kQueued, TuneState::kRunning, TuneState::kDone, TuneState::kFailed, TuneState::kCancelled}) {
    if (TuneStateName(known) == state) return known;
  }
  return TuneState::kRunning;
}

Error ElsewhereError(const TuneRecord& holder) {
  return CancelledError("server " + holder.server + " runs this tuning (job " + holder.job_id +
                        "); it did not run here")
      .WithReason(std::string(kTunedElsewhere));
}

// The token of a "TOKEN\nRECORD" listing value.
std::string ListedToken(const FleetTuneJob& job) { return job.listed_value.substr(0, job.listed_value.find('\n')); }

}  // namespace

std::string NewTuneJobId() {
  thread_local std::mt19937_64 random(std::random_device{}());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(random()));
  return text;
}

FleetHold::FleetHold(FleetTuning& fleet, TuneRecord record, std::unique_ptr<cache::shared::TuneLeases::Lease> lease,
                     bool skip_if_finished)
    : fleet_(fleet), skip_if_finished_(skip_if_finished), record_(std::move(record)), lease_(std::move(lease)) {}

Status FleetHold::Admit() {
  std::lock_guard lock(mu_);
  if (lease_ && !lease_->lost()) {
    lease_->SetState("running");
    return {};
  }
  lease_.reset();  // lost: another holder's now, so its end does nothing
  record_.state = "running";
  if (skip_if_finished_) {
    Result<std::optional<TuneRecord>> finished = fleet_.leases().Finished(record_.entry);
    // A cancelled job's entry is still worth tuning; a done or failed one's
    // is not, for the marker's while.
    if (finished && *finished && (*finished)->state != TuneStateName(TuneState::kCancelled)) {
      fleet_.CountSkipped();
      return CancelledError("the fleet tuned this entry already (job " + (*finished)->job_id + " on server " +
                            (*finished)->server + " ended " + (*finished)->state + ")")
          .WithReason(std::string(kTunedElsewhere));
    }
  }
  Result<cache::shared::TuneLeases::Claim> claim = fleet_.leases().TryClaim(record_);
  if (!claim) return {};  // Redis down: tune here, as compiles do
  if (claim->lease) {
    lease_ = std::move(claim->lease);
    return {};
  }
  const FleetTuneJob& holder = *claim->holder;
  // Unreadable (no kiln's), or this server's own: tune here.
  if (holder.record.job_id.empty() || fleet_.leases().Holds(holder.holder_token)) return {};
  fleet_.CountSkipped();
  return ElsewhereError(holder.record);
}

void FleetHold::Ended(TuneState state) {
  std::lock_guard lock(mu_);
  if (!lease_) return;
  if (state == TuneState::kCancelled && fleet_.shutting_down()) {
    lease_->HandOver();
  } else {
    lease_->End(TuneStateName(state));
  }
  lease_.reset();
}

void FleetHold::HandOver() {
  std::lock_guard lock(mu_);
  if (!lease_) return;
  lease_->HandOver();
  lease_.reset();
}

FleetTuning::FleetTuning(cache::shared::SharedTier& tier, std::string server_name,
                         std::chrono::milliseconds scan_interval)
    : leases_(tier),
      scan_interval_(std::max(scan_interval, std::chrono::milliseconds(10))),
      server_name_(std::move(server_name)) {}

FleetTuning::~FleetTuning() { StopScan(); }

void FleetTuning::set_server_name(std::string name) {
  std::lock_guard lock(mu_);
  server_name_ = std::move(name);
}

std::string FleetTuning::server_name() const {
  std::lock_guard lock(mu_);
  return server_name_;
}

void FleetTuning::StartScan(TakeOver take_over) {
  std::lock_guard lock(mu_);
  if (scanner_.joinable() || stopping_) return;
  take_over_ = std::move(take_over);
  scanner_ = std::thread([this] { ScanLoop(); });
}

void FleetTuning::StopScan() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (scanner_.joinable()) scanner_.join();
}

TuneRecord FleetTuning::RecordOf(const TuneJobSpec& spec, int64_t created_ms) const {
  TuneRecord record;
  record.entry = spec.entry;
  record.server = server_name();
  record.job_id = spec.id;
  record.state = "queued";
  record.background = spec.background;
  record.max_trials = spec.budget.max_trials;
  record.max_seconds = spec.budget.max_seconds;
  record.seed = spec.budget.seed;
  record.created_ms = created_ms;
  record.takes_over = spec.takes_over;
  return record;
}

TuneJobView FleetTuning::ViewOf(const TuneRecord& record) const {
  TuneJobView view;
  view.id = record.job_id;
  view.entry = record.entry;
  view.state = FleetStateOf(record.state);
  view.background = record.background;
  view.max_trials = record.max_trials;
  view.time_budget_s = record.max_seconds;
  view.seed = record.seed;
  view.created_ms = record.created_ms;
  view.server = record.server;
  view.takes_over = record.takes_over;
  return view;
}

FleetTuning::Decision FleetTuning::Claim(const TuneJobSpec& spec, int64_t created_ms) {
  TuneRecord record = RecordOf(spec, created_ms);
  Result<cache::shared::TuneLeases::Claim> claim = leases_.TryClaim(record);
  if (!claim) return Decision{.hold = std::make_shared<FleetHold>(*this, record, nullptr, false)};
  if (claim->lease) return Decision{.hold = std::make_shared<FleetHold>(*this, record, std::move(claim->lease), false)};
  const FleetTuneJob& holder = *claim->holder;
  // This server's own lease (its job for the entry is queued or running,
  // and the queue answers it), or one no kiln wrote: try again at the start.
  if (holder.record.job_id.empty() || leases_.Holds(holder.holder_token)) {
    return Decision{.hold = std::make_shared<FleetHold>(*this, record, nullptr, false)};
  }
  CountSkipped();
  return Decision{.elsewhere = ViewOf(holder.record)};
}

std::shared_ptr<FleetHold> FleetTuning::ClaimAtStart(const TuneJobSpec& spec, int64_t created_ms) {
  return std::make_shared<FleetHold>(*this, RecordOf(spec, created_ms), nullptr, true);
}

std::shared_ptr<FleetHold> FleetTuning::ClaimOrphan(const TuneJobSpec& spec, int64_t created_ms) {
  TuneRecord record = RecordOf(spec, created_ms);
  Result<cache::shared::TuneLeases::Claim> claim = leases_.TryClaim(record);
  if (!claim || !claim->lease) return nullptr;
  return std::make_shared<FleetHold>(*this, std::move(record), std::move(claim->lease), false);
}

void FleetTuning::Prune(const FleetTuneJob& orphan) { (void)leases_.Unlist(orphan); }

std::vector<TuneJobView> FleetTuning::List(const std::string& tenant) {
  std::vector<TuneJobView> views;
  Result<std::vector<FleetTuneJob>> jobs = leases_.List(tenant);
  if (!jobs) return views;
  for (const FleetTuneJob& job : *jobs) {
    if (job.live && !job.record.job_id.empty() && !leases_.Holds(job.holder_token)) views.push_back(ViewOf(job.record));
  }
  return views;
}

std::optional<TuneJobView> FleetTuning::Find(const std::string& tenant, const std::string& id) {
  Result<std::vector<FleetTuneJob>> jobs = leases_.List(tenant);
  if (!jobs) return std::nullopt;
  for (const FleetTuneJob& job : *jobs) {
    if (job.live && (job.record.job_id == id || job.record.takes_over == id)) return ViewOf(job.record);
  }
  return std::nullopt;
}

void FleetTuning::ScanLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, scan_interval_, [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    ScanOnce();
    lock.lock();
  }
}

void FleetTuning::ScanOnce() {
  if (shutting_down_) return;
  Result<std::vector<std::string>> tenants = leases_.Tenants();
  if (!tenants) return;
  for (const std::string& tenant : *tenants) {
    Result<std::vector<FleetTuneJob>> jobs = leases_.List(tenant);
    if (!jobs) return;  // Redis down: the next scan
    for (const FleetTuneJob& job : *jobs) {
      if (shutting_down_) return;
      // An orphan of this server's own (its renewal takes the lease again)
      // is not one.
      if (job.live || job.record.job_id.empty() || leases_.Holds(ListedToken(job))) continue;
      take_over_(job);
    }
  }
}

}  // namespace kiln::service
