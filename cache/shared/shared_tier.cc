#include "cache/shared/shared_tier.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <random>

#include "base/version.h"

#include "cache/shared/server_identity.h"
#include "cache/shared/value_mac.h"

namespace kiln::cache::shared {
namespace {

using Clock = std::chrono::steady_clock;

// Extends the lease only while `token` still holds it.
constexpr const char* kRenewScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
// Takes the lease when it is free or stale: {1} taken, {2} taken over a
// lease with no TTL or one past ARGV[3] ms (no live kiln's), {0, pttl}
// held by a live holder.
constexpr const char* kClaimScript =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end "
    "local t = redis.call('pttl', KEYS[1]) "
    "if t == -1 or t > tonumber(ARGV[3]) then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return {2} end "
    "return {0, t}";
// Deletes the lease only while `token` still holds it, and tells waiters.
constexpr const char* kReleaseScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) "
    "redis.call('publish', ARGV[2], ARGV[3]) return 1 else return 0 end";
// Writes entry KEYS[1] and its version KEYS[2] (ARGV[2], "RANK:CREATED")
// unless the version there is newer and its entry still there ({0}); drops
// the failure marker KEYS[3]; tells the fleet (ARGV[4] on channel ARGV[3]).
// ARGV[5]: the TTL in ms, "0" for none.
constexpr const char* kPublishScript =
    "local old = redis.call('get', KEYS[2]) "
    "if old and redis.call('exists', KEYS[1]) == 1 then "
    "  local r, t = string.match(old, '^(%d+):(%d+)$') "
    "  local nr, nt = string.match(ARGV[2], '^(%d+):(%d+)$') "
    "  if r and nr and (tonumber(r) > tonumber(nr) or (tonumber(r) == tonumber(nr) and tonumber(t) > tonumber(nt))) "
    "  then return 0 end "
    "end "
    "if ARGV[5] == '0' then redis.call('set', KEYS[1], ARGV[1]) redis.call('set', KEYS[2], ARGV[2]) "
    "else redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[5]) redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[5]) end "
    "redis.call('del', KEYS[3]) "
    "redis.call('publish', ARGV[3], ARGV[4]) "
    "return 1";

// A failure marker's value: this header, then kiln version, compiler
// format, code, reason, found-by and message, one per line (the message
// last: it may hold newlines).
constexpr std::string_view kFailureMagic = "KILNFAIL1";
constexpr size_t kMaxFailureMessage = 4096;

std::string ThisKilnVersion() { return std::string(kKilnVersion) + "/" + std::to_string(kCompilerFormatVersion); }


Error DownError(const std::string& last_error, int64_t retry_in_ms) {
  return UnavailableError("shared tier unavailable (" + last_error + "); next try in " + std::to_string(retry_in_ms) +
                          " ms")
      .WithReason("shared_unavailable");
}

Error ReplyError(const std::string& what, const RedisReply& reply) {
  return UnavailableError("shared tier: " + what + " answered " +
                          (reply.IsError() ? reply.text : std::string("an unexpected reply")))
      .WithReason("shared_unavailable");
}

}  // namespace

std::string SharedTier::KeyPrefix(const EntryId& id) {
  return "kiln:{" + id.key.Hex() + "}:" + id.chip + ":v" + std::to_string(id.format_version) + ":" + id.tenant;
}

std::string SharedTier::EntryKey(const EntryId& id) { return KeyPrefix(id) + ":entry"; }
std::string SharedTier::LeaseKey(const EntryId& id) { return KeyPrefix(id) + ":lease"; }
std::string SharedTier::VersionKey(const EntryId& id) { return KeyPrefix(id) + ":version"; }
std::string SharedTier::FailureKey(const EntryId& id) { return KeyPrefix(id) + ":failure"; }

SharedTier::SharedTier(SharedTierOptions options)
    : options_(std::move(options)), client_(options_.url, options_.client), backoff_(options_.backoff_initial) {
  renewer_ = std::thread([this] { BackgroundLoop(); });
}

SharedTier::~SharedTier() {
  std::vector<HeldLease> held;
  {
    std::lock_guard lock(leases_mu_);
    stopping_ = true;
    for (auto& [token, lease] : held_) held.push_back(lease);
  }
  leases_cv_.notify_all();
  renewer_.join();
  for (const HeldLease& lease : held) Release(lease.key, lease.token, lease.event);
}

Result<std::vector<RedisReply>> SharedTier::Call(std::string_view key,
                                                 const std::vector<RedisClient::Command>& commands) {
  {
    std::lock_guard lock(health_mu_);
    const Clock::time_point now = Clock::now();
    if (!up_ && now < down_until_) {
      counters_.errors++;
      return DownError(last_error_,
                       std::chrono::duration_cast<std::chrono::milliseconds>(down_until_ - now).count());
    }
  }
  Result<std::vector<RedisReply>> replies = client_.Pipeline(key, commands);
  std::lock_guard lock(health_mu_);
  if (replies) {
    up_ = true;
    backoff_ = options_.backoff_initial;
    return replies;
  }
  counters_.errors++;
  last_error_ = replies.error().message;
  if (up_) backoff_ = options_.backoff_initial;
  up_ = false;
  down_until_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  return replies;
}

std::optional<BundleEntry> SharedTier::Verified(const EntryId& id, std::string_view value) {
  std::string_view bytes = UnsignedPart(value);
  if (!options_.value_key.empty()) {
    Result<std::string_view> opened = OpenSignedValue(options_.value_key, value);
    if (!opened) {
      counters_.corrupt++;
      return std::nullopt;
    }
    bytes = *opened;
  }
  Result<Bundle> bundle = DecodeBundle(bytes, CurrentSchemaVersion(), options_.verify);
  if (!bundle || bundle->entries.size() != 1 || !bundle->records.empty() || !(bundle->entries[0].metadata.id == id)) {
    counters_.corrupt++;
    return std::nullopt;
  }
  return std::move(bundle->entries[0]);
}

Result<std::optional<BundleEntry>> SharedTier::Fetch(const EntryId& id) {
  const std::string key = EntryKey(id);
  // A fetch renews the entry's time to live (GETEX, Redis 6.2+), so what
  // servers use stays and what nobody asks for expires.
  const std::string ttl = std::to_string(options_.entry_ttl.count());
  const bool renew = options_.entry_ttl.count() > 0 && getex_supported_.load(std::memory_order_relaxed);
  const std::string version_key = VersionKey(id);
  std::vector<RedisClient::Command> commands = {renew ? RedisClient::Command{"GETEX", key, "PX", ttl}
                                                      : RedisClient::Command{"GET", key}};
  // The version lives as long as its entry.
  if (renew) commands.push_back({"PEXPIRE", version_key, ttl});
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Call(key, commands));
  if (renew && replies.front().IsError() && replies.front().text.find("unknown command") != std::string::npos) {
    getex_supported_ = false;  // an older Redis: plain GET from now on
    return Fetch(id);
  }
  const RedisReply& reply = replies.front();
  if (reply.IsError()) {
    counters_.errors++;
    return ReplyError("GET", reply);
  }
  if (reply.kind != RedisReply::Kind::kString) {
    counters_.misses++;
    return std::optional<BundleEntry>();
  }
  std::optional<BundleEntry> entry = Verified(id, reply.text);
  (entry ? counters_.hits : counters_.misses)++;
  return entry;
}

Status SharedTier::Publish(const BundleEntry& entry) {
  Bundle bundle;
  bundle.schema_version = CurrentSchemaVersion();
  bundle.entries.push_back(entry);
  // Fast compression: a server may be waiting for this publish.
  KILN_ASSIGN_OR_RETURN(std::string value, EncodeBundle(bundle, kFastBundleZstdLevel));
  if (!options_.value_key.empty()) value = SignValue(options_.value_key, value);
  if (value.size() > options_.max_value_bytes)
    return ResourceExhaustedError("shared tier: the entry is " + std::to_string(value.size()) +
                                  " bytes encoded, over the " + std::to_string(options_.max_value_bytes) +
                                  "-byte limit; kept locally only")
        .WithReason("shared_entry_too_large");
  const EntryId& id = entry.metadata.id;
  const std::string key = EntryKey(id);
  const EntryVersion version = VersionOf(entry.metadata);
  const std::string event = EncodeFleetEvent({.kind = FleetEventKind::kPublished, .id = id, .version = version});
  const std::string ttl = std::to_string(std::max<int64_t>(options_.entry_ttl.count(), 0));
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        Call(key, {{"EVAL", kPublishScript, "3", key, VersionKey(id), FailureKey(id), value,
                                    FormatVersion(version), kFleetChannel, event, ttl}}));
  const RedisReply& reply = replies.front();
  if (reply.kind != RedisReply::Kind::kInteger) {
    counters_.errors++;
    return ReplyError("the publish script", reply);
  }
  if (reply.integer == 0) {
    counters_.publishes_refused++;
    return FailedPreconditionError("shared tier: a newer entry than " + FormatVersion(version) + " is there for " +
                                   id.ToString() + "; kept")
        .WithReason("shared_newer_entry");
  }
  counters_.publishes++;
  return {};
}

Status SharedTier::PublishFailure(const EntryId& id, const SharedFailure& failure) {
  std::string value = std::string(kFailureMagic) + "\n" + ThisKilnVersion() + "\n" +
                      std::to_string(static_cast<int>(failure.code)) + "\n" + failure.reason + "\n" + ProcessName() +
                      "\n" + failure.message.substr(0, kMaxFailureMessage);
  if (!options_.value_key.empty()) value = SignValue(options_.value_key, value);
  const std::string key = FailureKey(id);
  const std::string ttl = std::to_string(std::max<int64_t>(options_.failure_ttl.count(), 1));
  const std::string event = EncodeFleetEvent({.kind = FleetEventKind::kFailed, .id = id, .version = {}});
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        Call(key, {{"SET", key, value, "PX", ttl}, {"PUBLISH", kFleetChannel, event}}));
  if (!replies.front().IsStatus("OK")) {
    counters_.errors++;
    return ReplyError("SET", replies.front());
  }
  counters_.failures_published++;
  return {};
}

std::optional<SharedFailure> SharedTier::ReadFailure(const RedisReply& reply) {
  if (reply.kind != RedisReply::Kind::kString) return std::nullopt;
  std::string_view bytes = reply.text;
  if (!options_.value_key.empty()) {
    Result<std::string_view> opened = OpenSignedValue(options_.value_key, bytes);
    if (!opened) return std::nullopt;
    bytes = *opened;
  } else {
    bytes = UnsignedPart(bytes);
  }
  std::vector<std::string_view> lines;
  while (lines.size() < 5) {
    const size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) break;
    lines.push_back(bytes.substr(0, newline));
    bytes.remove_prefix(newline + 1);
  }
  if (lines.size() != 5 || lines[0] != kFailureMagic || lines[1] != ThisKilnVersion()) return std::nullopt;
  int code = -1;
  const auto [end, error] = std::from_chars(lines[2].data(), lines[2].data() + lines[2].size(), code);
  if (error != std::errc() || end != lines[2].data() + lines[2].size() || code < 0 ||
      code > static_cast<int>(ErrorCode::kInternal))
    return std::nullopt;
  return SharedFailure{.code = static_cast<ErrorCode>(code),
                       .reason = std::string(lines[3]),
                       .message = std::string(bytes.substr(0, kMaxFailureMessage)),
                       .found_by = std::string(lines[4])};
}

Result<std::optional<EntryVersion>> SharedTier::StoredVersion(const EntryId& id) {
  const std::string key = VersionKey(id);
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Call(key, {{"GET", key}}));
  const RedisReply& reply = replies.front();
  if (reply.IsError()) {
    counters_.errors++;
    return ReplyError("GET", reply);
  }
  if (reply.kind != RedisReply::Kind::kString) return std::optional<EntryVersion>();
  return ParseVersion(reply.text);
}

SharedTier::Lease::Lease(SharedTier* tier, std::string key, std::string token, std::string event)
    : tier_(tier),
      key_(std::move(key)),
      token_(std::move(token)),
      event_(std::move(event)),
      lost_(std::make_shared<std::atomic<bool>>(false)) {}

SharedTier::Lease::~Lease() {
  {
    std::lock_guard lock(tier_->leases_mu_);
    tier_->held_.erase(token_);
  }
  tier_->Release(key_, token_, event_);
}

void SharedTier::Release(const std::string& key, const std::string& token, const std::string& event) {
  // Best effort: a lease not released expires after lease_ttl.
  (void)Call(key, {{"EVAL", kReleaseScript, "1", key, token, kFleetChannel, event}});
}

Result<std::unique_ptr<SharedTier::Lease>> SharedTier::TryLease(const EntryId& id,
                                                              std::chrono::milliseconds& held_for) {
  const std::string key = LeaseKey(id);
  std::string token = NewLeaseToken();
  const std::string ttl = std::to_string(options_.lease_ttl.count());
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        Call(key, {{"EVAL", kClaimScript, "1", key, token, ttl, ttl}}));
  const RedisReply& reply = replies.front();
  if (reply.kind != RedisReply::Kind::kArray || reply.elements.empty() ||
      reply.elements[0].kind != RedisReply::Kind::kInteger) {
    counters_.errors++;
    return ReplyError("the lease script", reply);
  }
  const long long outcome = reply.elements[0].integer;
  if (outcome == 0) {
    held_for = std::chrono::milliseconds(reply.elements.size() > 1 ? std::max(0LL, reply.elements[1].integer) : 0);
    return std::unique_ptr<Lease>();
  }
  if (outcome == 2) counters_.stale_leases++;
  std::string event = EncodeFleetEvent({.kind = FleetEventKind::kReleased, .id = id, .version = {}});
  std::unique_ptr<Lease> lease(new Lease(this, key, token, event));
  {
    std::lock_guard lock(leases_mu_);
    held_[token] = HeldLease{key, token, std::move(event), lease->lost_};
  }
  return lease;
}

Result<SharedTier::Claim> SharedTier::TryClaim(const EntryId& id) {
  const std::string entry_key = EntryKey(id);
  const std::string failure_key = FailureKey(id);
  Claim claim;
  // Cheap look first: the value may be megabytes.
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> exists,
                        Call(entry_key, {{"EXISTS", entry_key}, {"GET", failure_key}}));
  if (exists.front().integer != 1 && (claim.failure = ReadFailure(exists[1]))) {
    counters_.failures_found++;
    return claim;
  }
  if (exists.front().integer == 1) {
    KILN_ASSIGN_OR_RETURN(claim.entry, Fetch(id));
    if (claim.entry) return claim;
  }
  KILN_ASSIGN_OR_RETURN(claim.lease, TryLease(id, claim.held_for));
  if (!claim.lease) {
    claim.held = true;
    return claim;
  }
  // The holder may have published and released between the look and the
  // lease.
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> again, Call(entry_key, {{"EXISTS", entry_key}}));
  if (again.front().integer == 1) {
    KILN_ASSIGN_OR_RETURN(std::optional<BundleEntry> entry, Fetch(id));
    if (entry) {
      claim.lease.reset();
      claim.entry = std::move(entry);
    }
  }
  return claim;
}

Result<SharedTier::Claim> SharedTier::FetchOrLease(const EntryId& id, const std::function<bool()>& cancelled) {
  const Clock::time_point give_up = Clock::now() + options_.wait_limit;
  std::chrono::milliseconds pause = options_.poll_initial;
  bool waited = false;
  for (bool first = true;; first = false) {
    KILN_ASSIGN_OR_RETURN(Claim claim, TryClaim(id));
    if (first && !claim.entry) counters_.misses++;
    if (!claim.held) {
      if (waited && claim.lease) counters_.takeovers++;
      claim.waited = waited;
      return claim;
    }
    if (!waited) counters_.lease_waits++;
    waited = true;
    if (cancelled && cancelled()) return CancelledError("stopped waiting for another server's compile");
    if (Clock::now() + pause > give_up)
      return DeadlineExceededError("another server has compiled " + id.ToString() + " for longer than " +
                                   std::to_string(options_.wait_limit.count()) + " ms")
          .WithReason("shared_wait_timeout");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, options_.poll_max);
  }
}

Result<std::optional<SharedPresence>> SharedTier::Where(const EntryId& id) {
  const std::string entry_key = EntryKey(id);
  const std::string lease_key = LeaseKey(id);
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        Call(entry_key, {{"STRLEN", entry_key}, {"PTTL", entry_key}, {"EXISTS", lease_key}}));
  for (const RedisReply& reply : replies)
    if (reply.IsError()) return ReplyError("STRLEN/PTTL", reply);
  SharedPresence presence;
  presence.lease_held = replies[2].integer == 1;
  if (replies[1].integer == -2) {
    if (!presence.lease_held) return std::optional<SharedPresence>();
    presence.expires_in_ms = 0;
    return std::optional<SharedPresence>(presence);
  }
  presence.bytes = static_cast<uint64_t>(replies[0].integer);
  presence.expires_in_ms = replies[1].integer;
  return std::optional<SharedPresence>(presence);
}

void SharedTier::BackgroundLoop() {
  const auto renew_period = std::max(options_.lease_ttl / 3, std::chrono::milliseconds(1));
  const auto probe_period = std::max(options_.probe_interval, std::chrono::milliseconds(1));
  Clock::time_point next_renew = Clock::now() + renew_period;
  Clock::time_point next_probe = Clock::now() + probe_period;
  std::unique_lock lock(leases_mu_);
  while (!stopping_) {
    leases_cv_.wait_until(lock, std::min(next_renew, next_probe), [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    const Clock::time_point now = Clock::now();
    if (now >= next_renew) {
      RenewHeld();
      next_renew = now + renew_period;
    }
    if (now >= next_probe) {
      // Past the backoff: this PING is what tells Health() Redis is back.
      Result<std::vector<RedisReply>> pong = client_.Pipeline("", {{"PING"}});
      std::lock_guard health(health_mu_);
      if (pong && pong->front().IsStatus("PONG")) {
        up_ = true;
        backoff_ = options_.backoff_initial;
      } else if (up_) {
        up_ = false;
        last_error_ = pong ? "PING answered " + pong->front().text : pong.error().message;
        down_until_ = Clock::now() + backoff_;
      }
      next_probe = Clock::now() + probe_period;
    }
    lock.lock();
  }
}

void SharedTier::RenewHeld() {
  std::vector<HeldLease> held;
  {
    std::lock_guard lock(leases_mu_);
    for (auto& [token, lease] : held_) held.push_back(lease);
  }
  const std::string ttl = std::to_string(options_.lease_ttl.count());
  for (const HeldLease& lease : held) {
    Result<std::vector<RedisReply>> renewed =
        Call(lease.key, {{"EVAL", kRenewScript, "1", lease.key, lease.token, ttl}});
    // Redis down: the lease may lapse; the holder still finishes and
    // publishes. Another holder now: this one lost it.
    if (renewed && renewed->front().kind == RedisReply::Kind::kInteger && renewed->front().integer == 0)
      lease.lost->store(true);
  }
}

Status SharedTier::Probe() {
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Call("", {{"PING"}}));
  if (!replies.front().IsStatus("PONG")) return ReplyError("PING", replies.front());
  return {};
}

SharedHealth SharedTier::Health() const {
  std::lock_guard lock(health_mu_);
  SharedHealth health;
  health.up = up_;
  health.url = options_.url.Redacted();
  health.last_error = last_error_;
  if (!up_)
    health.retry_in_ms = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(down_until_ - Clock::now()).count());
  return health;
}

SharedCounters SharedTier::Counters() const {
  return SharedCounters{.hits = counters_.hits,
                        .misses = counters_.misses,
                        .errors = counters_.errors,
                        .corrupt = counters_.corrupt,
                        .publishes = counters_.publishes,
                        .lease_waits = counters_.lease_waits,
                        .takeovers = counters_.takeovers,
                        .stale_leases = counters_.stale_leases,
                        .failures_published = counters_.failures_published,
                        .failures_found = counters_.failures_found,
                        .publishes_refused = counters_.publishes_refused};
}

}  // namespace kiln::cache::shared
