// The shared second tier of the cache: entries in Redis, one compile per
// program across every kiln server that points at it.
//
// Layout in Redis (one hash slot per entry, so it works on a cluster):
//   kiln:{KEY}:CHIP:vFORMAT:TENANT:entry  a one-entry bundle (bundle.h):
//       metadata, key components, request hashes and the executable
//       zstd-compressed, every part checksummed; verified before use, and
//       refused unless it names exactly the entry asked for
//   kiln:{KEY}:CHIP:vFORMAT:TENANT:version  the entry's version
//       (fleet_events.h EntryVersion), written with it by one script that
//       refuses to replace a newer entry (a tuned plan) with an older one,
//       and PUBLISHes the `published` event on kFleetChannel
//   kiln:{KEY}:CHIP:vFORMAT:TENANT:failure  a compile failure (the error
//       and the kiln version that found it), for failure_ttl: a server
//       that finds it answers the error without compiling, unless it runs
//       another kiln version; an entry published later deletes it
//   kiln:{KEY}:CHIP:vFORMAT:TENANT:lease  the compile lease: a random token,
//       SET NX PX lease_ttl, renewed every lease_ttl/3 while its holder
//       compiles, deleted (only by its holder) when it finishes. A lease
//       with no time to live, or one longer than lease_ttl, is no live
//       kiln's (every server of a fleet runs one --shared-lease): it is
//       stale and taken over at once, so a planted key cannot hold a
//       compile. A wait on a live lease is bounded by wait_limit, and by
//       whoever waits (TryClaim never waits; lease_waiter.h waits without a
//       thread of its own).
// Tenants never share a Redis key: the tenant is part of every key, and
// the shared namespace is its own tenant. Entries expire entry_ttl after
// they were last published or fetched (0: never; then Redis's maxmemory
// policy evicts, see README).
//
// Failure: when Redis cannot be reached, answers slowly or restarts, every
// call fails fast with Unavailable (reason shared_unavailable) and the
// tier backs off (backoff_initial doubling to backoff_max) before touching
// Redis again; the caller serves and compiles locally. Health() and the
// counters say so; a background PING every probe_interval keeps Health()
// true to Redis within that time, whether or not requests touch it.
// Credentials never appear in messages.
//
// Thread-safe. Owns a thread that renews held leases and probes Redis.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/status.h"
#include "cache/bundle.h"
#include "cache/entry.h"
#include "cache/shared/fleet_events.h"
#include "cache/shared/redis_client.h"
#include "cache/shared/redis_url.h"

namespace kiln::cache::shared {

struct SharedTierOptions {
  RedisUrl url;
  RedisClientOptions client;
  std::chrono::milliseconds entry_ttl{std::chrono::hours(24 * 7)};  // 0: no expiry
  std::chrono::milliseconds lease_ttl{15'000};
  // How long a compile failure is answered from the shared tier.
  std::chrono::milliseconds failure_ttl{60'000};
  // The longest a compile waits for another server's lease before it
  // compiles on its own.
  std::chrono::milliseconds wait_limit{std::chrono::minutes(30)};
  std::chrono::milliseconds poll_initial{5};
  std::chrono::milliseconds poll_max{250};
  std::chrono::milliseconds backoff_initial{250};
  std::chrono::milliseconds backoff_max{30'000};
  // How often the background thread PINGs Redis (whatever the backoff), so
  // Health() says up within this long of Redis coming back, and down within
  // this long of it going away when no request touches it.
  std::chrono::milliseconds probe_interval{1'000};
  // Entries larger than this (encoded) are not published (Redis's default
  // proto-max-bulk-len is 512 MB).
  size_t max_value_bytes = size_t{512} << 20;
  // Checks a fetched executable before it is used (tests may relax it).
  ExecutableVerifier verify = VerifyProgramBytes;
  // The fleet's key for the MAC on values (value_mac.h), at least
  // kMinValueKeyBytes; empty: values carry none and any is read.
  std::string value_key;
};

// What the tier did since it started (kiln_shared_* metrics).
struct SharedCounters {
  int64_t hits = 0;         // an entry fetched and verified
  int64_t misses = 0;       // looked, absent
  int64_t errors = 0;       // Redis unreachable, slow, or answering errors
  int64_t corrupt = 0;      // a stored value that failed verification
  int64_t publishes = 0;    // entries written
  int64_t lease_waits = 0;  // compiles that waited on another server's lease
  int64_t takeovers = 0;    // leases taken after their holder went away
  int64_t stale_leases = 0;  // leases with no or too long a TTL, taken over at once
  int64_t failures_published = 0;  // compile failures marked for the fleet
  int64_t failures_found = 0;      // compiles answered from a marked failure
  int64_t publishes_refused = 0;   // publishes of an entry older than the one in Redis
};

// A compile failure as the fleet shares it.
struct SharedFailure {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string reason;   // the API reason (compile_failed, does_not_fit, ...)
  std::string message;  // Error::ToString() of the error answered
  std::string found_by;  // the server that compiled it (host:pid)
};

struct SharedHealth {
  bool up = true;          // false while backing off after a failure
  std::string url;         // redacted
  std::string last_error;  // empty when none yet
  int64_t retry_in_ms = 0;  // while down: until the next try
};

// Where an entry lives in Redis (kiln inspect).
struct SharedPresence {
  uint64_t bytes = 0;       // the stored value
  int64_t expires_in_ms = -1;  // -1: no expiry
  bool lease_held = false;  // a server is compiling it now
};

class SharedTier {
 public:
  explicit SharedTier(SharedTierOptions options);
  ~SharedTier();  // releases held leases (best effort), stops the renewer
  SharedTier(const SharedTier&) = delete;
  SharedTier& operator=(const SharedTier&) = delete;

  // A held compile lease; released when destroyed. lost() when a renewal
  // found another holder (the lease expired meanwhile).
  class Lease {
   public:
    ~Lease();
    bool lost() const { return lost_->load(); }

   private:
    friend class SharedTier;
    Lease(SharedTier* tier, std::string key, std::string token, std::string event);
    SharedTier* tier_;
    std::string key_;
    std::string token_;
    std::string event_;  // the `released` event told when it is let go
    std::shared_ptr<std::atomic<bool>> lost_;
  };

  // The verified entry for `id`, or nullopt when Redis has none (or only a
  // corrupt value, counted).
  Result<std::optional<BundleEntry>> Fetch(const EntryId& id);
  // Writes `entry` (with entry_ttl) and its version, replacing what is
  // there unless that is newer (then refused: FailedPrecondition, reason
  // shared_newer_entry, counted), and tells the fleet.
  Status Publish(const BundleEntry& entry);
  // Marks `id`'s compile as failed for failure_ttl and tells the fleet.
  Status PublishFailure(const EntryId& id, const SharedFailure& failure);
  // The version of `id` in Redis; nullopt when it has none (no entry, or
  // one published before versions were kept).
  Result<std::optional<EntryVersion>> StoredVersion(const EntryId& id);

  // An authenticated connection of its own, for the fleet's subscription
  // (fleet_subscriber.h).
  Result<std::unique_ptr<RedisConnection>> OpenSubscription() { return client_.OpenDedicated(); }

  // One look, never waiting: the entry when Redis has it; else the lease
  // to compile it, when no live server holds one (a stale lease is taken
  // over, counted); else `held`: another server compiles it now, and its
  // lease runs for `held_for` more.
  struct Claim {
    std::optional<BundleEntry> entry;
    std::unique_ptr<Lease> lease;
    bool held = false;
    std::chrono::milliseconds held_for{0};
    // The compile failed on a server of the fleet within failure_ttl: the
    // error to answer, without a lease.
    std::optional<SharedFailure> failure;
    bool waited = false;  // set by whoever waited for this claim
  };
  Result<Claim> TryClaim(const EntryId& id);

  // TryClaim repeated until it answers the entry or the lease, pausing
  // poll_initial doubling to poll_max on this thread (tools and tests; the
  // server waits through lease_waiter.h): at most wait_limit (then
  // DeadlineExceeded, reason shared_wait_timeout), stopping early when
  // `cancelled` returns true (Cancelled). `waited` says it waited.
  Result<Claim> FetchOrLease(const EntryId& id, const std::function<bool()>& cancelled = nullptr);

  const SharedTierOptions& options() const { return options_; }
  // Count a wait on another server's lease, and a lease taken after such a
  // wait (a LeaseWaiter's, which waits outside this class).
  void CountLeaseWait() { counters_.lease_waits++; }
  void CountTakeover() { counters_.takeovers++; }

  // Where `id` lives in Redis; nullopt when absent.
  Result<std::optional<SharedPresence>> Where(const EntryId& id);

  // One PING (unless backing off): whether Redis answers now.
  Status Probe();

  SharedHealth Health() const;
  SharedCounters Counters() const;
  const RedisUrl& url() const { return options_.url; }

  // The Redis keys of `id` (for tests and tools).
  static std::string EntryKey(const EntryId& id);
  static std::string LeaseKey(const EntryId& id);
  static std::string VersionKey(const EntryId& id);
  static std::string FailureKey(const EntryId& id);
  // "kiln:{KEY}:CHIP:vFORMAT:TENANT": every key of `id` starts with it (one
  // hash slot), for the fleet's other records of an entry.
  static std::string KeyPrefix(const EntryId& id);

  // Runs `commands` as one pipeline on the node of `key`, with the tier's
  // backoff and health (fails fast with shared_unavailable while down): for
  // the fleet's records that live beside the entries (tuning jobs,
  // failures). Redis error replies come back as replies.
  Result<std::vector<RedisReply>> Run(std::string_view key, const std::vector<RedisClient::Command>& commands) {
    return Call(key, commands);
  }

 private:
  // Runs a pipeline unless backing off; records the outcome in the health.
  Result<std::vector<RedisReply>> Call(std::string_view key, const std::vector<RedisClient::Command>& commands);
  // Reads a failure marker; nullopt when absent, malformed, unsigned under
  // a value key, or written by another kiln version.
  std::optional<SharedFailure> ReadFailure(const RedisReply& reply);
  // Reads a fetched value; nullopt (counted corrupt) when it does not verify.
  std::optional<BundleEntry> Verified(const EntryId& id, std::string_view value);
  // The lease, or null with `held_for` set when a live lease is there.
  Result<std::unique_ptr<Lease>> TryLease(const EntryId& id, std::chrono::milliseconds& held_for);
  void Release(const std::string& key, const std::string& token, const std::string& event);
  // The background thread: renews held leases every lease_ttl/3 and PINGs
  // Redis every probe_interval.
  void BackgroundLoop();
  void RenewHeld();

  const SharedTierOptions options_;
  RedisClient client_;

  mutable std::mutex health_mu_;
  std::chrono::steady_clock::time_point down_until_;  // guarded by health_mu_
  std::chrono::milliseconds backoff_;                 // guarded by health_mu_
  bool up_ = true;                                    // guarded by health_mu_
  std::string last_error_;                            // guarded by health_mu_

  struct AtomicCounters {
    std::atomic<int64_t> hits{0}, misses{0}, errors{0}, corrupt{0}, publishes{0}, lease_waits{0}, takeovers{0},
        stale_leases{0}, failures_published{0}, failures_found{0}, publishes_refused{0};
  };
  AtomicCounters counters_;
  std::atomic<bool> getex_supported_{true};  // false once Redis refused GETEX

  std::mutex leases_mu_;
  std::condition_variable leases_cv_;
  struct HeldLease {
    std::string key;
    std::string token;
    std::string event;
    std::shared_ptr<std::atomic<bool>> lost;
  };
  std::map<std::string, HeldLease> held_;  // by token; guarded by leases_mu_
  bool stopping_ = false;                  // guarded by leases_mu_
  std::thread renewer_;
};

}  // namespace kiln::cache::shared
