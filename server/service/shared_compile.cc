// The shared tier's part in a compile (`kiln serve --shared`): before a
// local miss compiles, the entry is fetched from Redis, or this server waits
// on another server's compile lease (on the lease waiter: no thread held),
// or answers the failure another server marked; after it compiles, the
// entry (or a failure of the module's own) is published. The lease is held
// only while a compile thread runs the compile. Every failure of Redis
// falls back to the local path: a trainer sees latency, never an error.
#include "server/service/compile_service.h"
#include "server/service/reasons.h"
#include "server/service/service_errors.h"

namespace kiln::service {

void CompileService::OnSharedClaim(const std::string& flight_key, const cache::EntryId& id,
                                   Result<cache::shared::SharedTier::Claim> claim, CompileTask compile,
                                   bool on_compile_thread) {
  if (!claim) {
    if (claim.error().code == ErrorCode::kCancelled) return EndAbandonedWait(flight_key, id, std::move(compile));
    // Redis down, slow or waited too long: compile here without a lease
    // (counted by the tier).
    claim = cache::shared::SharedTier::Claim{};
  }
  if (claim->held) {
    // Another server compiles it: wait for its publish off every thread.
    auto cancelled = [this, flight_key] {
      return stopping_.load(std::memory_order_relaxed) || flights_.Abandoned(flight_key);
    };
    auto done = [this, flight_key, id, compile](Result<cache::shared::SharedTier::Claim> ended) mutable {
      // The waiter's thread must not block: the rest runs on a shared thread.
      auto outcome = std::make_shared<Result<cache::shared::SharedTier::Claim>>(std::move(ended));
      WorkerPool::Task next = [this, flight_key, id, compile, outcome]() mutable {
        OnSharedClaim(flight_key, id, std::move(*outcome), std::move(compile));
      };
      if (!shared_threads_->TrySubmit(next)) RefuseCompile(flight_key);
    };
    {
      std::lock_guard lock(waiter_mu_);
      if (lease_waiter_ != nullptr) {
        lease_waiter_->Wait(id, std::move(cancelled), std::move(done));
        return;
      }
    }
    // Shutting down: the waiter is gone.
    return EndAbandonedWait(flight_key, id, std::move(compile));
  }
  if (claim->failure) {
    // Another server of the fleet compiled it and failed: the same answer,
    // without compiling again.
    auto failed = std::make_shared<FlightOutcome>();
    Error error;
    error.code = claim->failure->code;
    error.message = claim->failure->message;
    if (!claim->failure->reason.empty()) error.WithReason(claim->failure->reason);
    failed->error = std::move(error);
    flights_.Finish(flight_key, failed);
    return;
  }
  if (claim->entry) {
    auto fetched = std::make_shared<FlightOutcome>();
    fetched->entry = ViewOfMetadata(claim->entry->metadata);
    fetched->entry.executable = std::make_shared<const std::string>(claim->entry->executable);
    fetched->from_shared = true;
    fetched->shared_waited = claim->waited;
    // Kept locally before the answer, so `stored` is true of this store.
    if (Status kept = KeepFetched(std::move(*claim->entry), fetched->entry); !kept) {
      const cache::StorageProblem problem = cache::StorageProblemOf(kept.error());
      if (problem != cache::StorageProblem::kNone) metrics_.NotStored(problem);
      fetched->not_stored = StorageFailure("the entry fetched from the shared tier was not stored", kept.error());
    }
    flights_.Finish(flight_key, fetched);
    return;
  }
  std::shared_ptr<cache::shared::SharedTier::Lease> lease = std::move(claim->lease);
  if (on_compile_thread) return compile(std::move(lease));
  if (lease != nullptr && compile_threads_.idle() == 0) {
    // The compile would queue: hold no lease meanwhile (a server of the
    // fleet with a free thread may take it), and claim again when a thread
    // starts it.
    lease.reset();
    WorkerPool::Task claim_at_start = [this, flight_key, id, compile = std::move(compile)]() mutable {
      OnSharedClaim(flight_key, id, options_.shared->TryClaim(id), std::move(compile), /*on_compile_thread=*/true);
    };
    if (!compile_threads_.TrySubmit(claim_at_start)) RefuseCompile(flight_key);
    return;
  }
  WorkerPool::Task task = [compile = std::move(compile), lease]() mutable { compile(std::move(lease)); };
  if (!compile_threads_.TrySubmit(task)) RefuseCompile(flight_key);
}

void CompileService::EndAbandonedWait(const std::string& flight_key, const cache::EntryId& id,
                                      CompileTask compile) {
  auto ended = std::make_shared<FlightOutcome>();
  if (stopping_.load()) {
    ended->error = UnavailableError("the server is shutting down").WithReason(std::string(kDraining));
    flights_.Finish(flight_key, ended);
    return;
  }
  ended->error = CancelledError("every client waiting for " + id.ToString() + " went away");
  // A request that joined meanwhile still waits: look again for it.
  if (!flights_.FinishIfAbandoned(flight_key, ended)) {
    OnSharedClaim(flight_key, id, options_.shared->TryClaim(id), std::move(compile));
  }
}

Status CompileService::KeepFetched(cache::BundleEntry fetched, const EntryView& view) {
  const uint64_t raw_bytes = fetched.executable.size();
  cache::Bundle bundle;
  bundle.entries.push_back(std::move(fetched));
  // One transaction; the fetched frame is stored as it is (no second
  // compression). A present copy is counted, not replaced.
  KILN_RETURN_IF_ERROR(store_.bundles().Import(bundle));
  entries_.Remember(view, raw_bytes);
  return Ok();
}

}  // namespace kiln::service
