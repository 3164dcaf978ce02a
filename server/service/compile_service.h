// CompileService: the executable of a module, from the cache or compiled
// once and stored.
//
// A call names a module by its text, its compile options and the hash of
// the raw request (compile_options.h). The service answers, in order:
//   1. a body seen before names its key without parsing (this process's
//      memory of request hashes, then the store's) and the store has it;
//   2. the text is read (module_reader.h) and its key looked up;
//   3. a miss compiles once however many callers ask for the key at once
//      (single_flight.h). With a shared tier (`--shared`), the entry is
//      fetched from it first, or this server waits for another server's
//      compile lease (without holding a thread: the lease waiter, woken by
//      the fleet's events), or answers the failure another server marked, or
//      takes the lease when a compile thread starts and compiles; the entry
//      is stored (compiled_entry.h), its compile logged, and published (a
//      failure of the module's own is marked for the fleet).
// AnswerFromMemory is step 1 from memory alone, for an event loop.
//
// Threads: Compile reads, fingerprints and looks up on the caller's thread;
// a compile runs on `compile_threads`, a shared-tier look on the service's
// shared threads. `done` runs exactly once: on the caller's thread for a hit
// or a failure before the flight, else on the thread that ends the flight.
//
// Failures carry API codes: module_reader.h's, compile_failure.h's, 503
// overloaded (every compile thread busy and the queue full), 503 draining,
// 500 internal (the store). A compile the store could not keep (a full disk,
// a read-only store) is still answered, `not_stored` saying why.
//
// Thread-safe. Shutdown ends shared-tier waits and joins the shared
// threads; the owner then stops `compile_threads` before destroying the
// service (their tasks use it).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/worker_pool.h"
#include "cache/cache_store.h"
#include "cache/shared/lease_waiter.h"
#include "cache/shared/shared_tier.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/module.h"
#include "server/service/entry_view.h"
#include "server/service/request_key_map.h"
#include "server/service/service_metrics.h"
#include "server/service/single_flight.h"
#include "server/service/stored_entries.h"

namespace kiln::service {

// A request's stage times.
struct CompileTimings {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double parse_ms = 0;
  double fingerprint_ms = 0;
  double lookup_ms = 0;
  double compile_ms = 0;
  double store_ms = 0;
};

// What a front door asks for.
struct CompileCall {
  std::string tenant;
  std::string hlo;  // the module's text; kept beside the entry to explain later misses
  // Concrete shapes of the entry's arguments (may be empty): they refine a
  // StableHLO module's dynamic dimensions before it is keyed.
  std::vector<hlo::Shape> argument_shapes;
  driver::CompileOptions options;
  hlo::Hash128 request_hash;  // HashCompileRequestBody of the raw request
  std::string client;         // X-Kiln-Client, for the compile log; may be empty
  std::function<bool()> gone = nullptr;  // true once the caller has left; null: never
  CompileTimings timings = {};
};

// The answer.
struct CompileAnswer {
  EntryView entry;  // with its bytes
  CacheOutcome outcome = CacheOutcome::kHit;
  bool fast_path = false;  // found by its request hash, never parsed
  double compile_ms = 0;   // the compile a miss ran, or the wait a joiner had
  CompileTimings timings;
  std::optional<Error> not_stored;  // compiled (or fetched), but the store could not keep it: why
  bool from_shared = false;         // fetched from the shared tier
};

using CompileDone = std::move_only_function<void(Result<CompileAnswer>)>;

struct CompileServiceOptions {
  size_t compile_queue_capacity = 256;  // distinct compiles waiting (503 overloaded beyond)
  // The shared tier (null: none), and its metrics; borrowed.
  cache::shared::SharedTier* shared = nullptr;
  int shared_threads = 8;
};

class CompileService {
 public:
  CompileService(cache::CacheStore& store, StoredEntries& entries, ServiceMetrics& metrics,
                 WorkerPool& compile_threads, CompileServiceOptions options);
  ~CompileService();
  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;

  // Step 1 from memory alone (no SQLite, no parse): the answer for a body
  // seen before whose entry the hot set holds, counted as a hit; nullopt
  // otherwise (the caller goes on to Compile, which counts the request).
  std::optional<CompileAnswer> AnswerFromMemory(const std::string& tenant, const hlo::Hash128& request_hash,
                                                const std::string& chip, const CompileTimings& timings);

  void Compile(CompileCall call, CompileDone done);

  // A request its front door refused before it became a call (a body it
  // could not read): counted as a failed compile request.
  void Refused();

  // Called with each entry a miss compiled and stored, after the answer
  // (background tuning). Set before the first compile.
  void set_on_stored(std::function<void(const cache::EntryId&, const driver::CompileOptions&)> on_stored) {
    on_stored_ = std::move(on_stored);
  }

  // Called with each entry a hit answers, on the answering thread (the
  // fleet's catch-up, fleet_sync.h): must be cheap and must not block. Set
  // before the first compile.
  void set_on_hit(std::function<void(const EntryView&)> on_hit) { on_hit_ = std::move(on_hit); }

  // The stored entry's copy in the shared tier, for a caller that changed
  // the entry (a tuned swap). Best effort: a failure is counted by the tier.
  void Publish(const cache::BundleEntry& entry);

  // Ends every wait on another server's lease (their callers get 503
  // draining); does not wait.
  void BeginShutdown() { stopping_ = true; }
  // That, and joins the shared threads. Call before stopping the compile
  // threads.
  void Shutdown();

  // Waits on other servers' leases now (for /metrics).
  size_t lease_waiting() const;

  // The fleet said `id` changed in the shared tier (published, its lease
  // let go, its compile failed): waits for it look again now. Any thread;
  // does not block.
  void OnFleetChange(const cache::EntryId& id);

 private:
  // What one compile flight answers its waiters.
  struct FlightOutcome {
    std::optional<Error> error;
    EntryView entry;
    std::optional<Error> not_stored;
    bool compiled = false;       // false: the leader found it stored after all
    bool from_shared = false;    // fetched from the shared tier
    bool shared_waited = false;  // ... after waiting on another server's compile
    double compile_ms = 0;
    double store_ms = 0;
  };
  using Flight = std::shared_ptr<const FlightOutcome>;
  // A compile's work once its lease question is settled: with the shared
  // tier's lease, or null (no shared tier, or it failed).
  using CompileTask = std::function<void(std::shared_ptr<cache::shared::SharedTier::Lease>)>;

  // The flight of a miss: joins it, or leads it and starts the compile.
  void JoinFlight(CompileCall call, std::shared_ptr<hlo::Module> module, cache::EntryId id, CompileDone done);
  void StartCompile(const std::string& flight_key, std::shared_ptr<hlo::Module> module, CompileCall call,
                    cache::EntryId id);
  // Compiles and stores (on a compile thread); `to_publish` gets the shared
  // tier's copy when there is a shared tier.
  Flight CompileAndStore(hlo::Module& module, const CompileCall& call, const cache::EntryId& id,
                         std::optional<cache::BundleEntry>* to_publish);
  // Marks a compile failure in the shared tier, when it is one the same
  // module would fail with on any server (best effort).
  void PublishFailure(const cache::EntryId& id, const Error& error);
  // Answers a miss's flight 503 overloaded (no thread took it).
  void RefuseCompile(const std::string& flight_key);
  // shared_compile.cc: what a look into the shared tier found (on a
  // shared thread): the entry (kept locally, then answered), the lease (the
  // compile goes on with it), another server's live lease (a wait on the
  // lease waiter, which comes back here), or a failure (the compile goes on
  // without a lease). A wait cancelled because every client left ends the
  // flight.
  // A lease is held only while its compile runs: one that would wait for a
  // compile thread is let go (another server with a free thread may take
  // it) and claimed again when a thread starts (`on_compile_thread`). A
  // failure another server marked is answered as it is.
  void OnSharedClaim(const std::string& flight_key, const cache::EntryId& id,
                     Result<cache::shared::SharedTier::Claim> claim, CompileTask compile,
                     bool on_compile_thread = false);
  void EndAbandonedWait(const std::string& flight_key, const cache::EntryId& id, CompileTask compile);
  // Stores a fetched entry in the local tier (its frame as fetched) and
  // indexes it; fails like BundleTransfer::Import.
  Status KeepFetched(cache::BundleEntry fetched, const EntryView& view);

  cache::CacheStore& store_;
  StoredEntries& entries_;
  ServiceMetrics& metrics_;
  WorkerPool& compile_threads_;
  const CompileServiceOptions options_;
  std::function<void(const cache::EntryId&, const driver::CompileOptions&)> on_stored_;
  std::function<void(const EntryView&)> on_hit_;
  SingleFlight<Flight> flights_;
  RequestKeyMap request_keys_;
  std::atomic<bool> stopping_{false};          // ends shared waits at shutdown
  std::unique_ptr<WorkerPool> shared_threads_;  // null without a shared tier: one look into Redis each
  // Likewise: waits on other servers' leases; gone once Shutdown began.
  mutable std::mutex waiter_mu_;
  std::unique_ptr<cache::shared::LeaseWaiter> lease_waiter_;  // guarded by waiter_mu_
};

}  // namespace kiln::service
