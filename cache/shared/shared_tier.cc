#include "cache/shared/shared_tier.h"

#include <unistd.h>

#include <random>

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
// Deletes the lease only while `token` still holds it.
constexpr const char* kReleaseScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

std::string KeyPrefix(const EntryId& id) {
  return "kiln:{" + id.key.Hex() + "}:" + id.chip + ":v" + std::to_string(id.format_version) + ":" + id.tenant;
}

// "host:pid:random": unique per lease, and says which server holds it.
std::string NewToken() {
  static std::atomic<uint64_t> sequence{0};
  thread_local std::mt19937_64 random(std::random_device{}());
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  char text[160];
  std::snprintf(text, sizeof(text), "%s:%d:%016llx%04llx", host, static_cast<int>(getpid()),
                static_cast<unsigned long long>(random()), static_cast<unsigned long long>(sequence++ & 0xffff));
  return text;
}

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

std::string SharedTier::EntryKey(const EntryId& id) { return KeyPrefix(id) + ":entry"; }
std::string SharedTier::LeaseKey(const EntryId& id) { return KeyPrefix(id) + ":lease"; }

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
  for (const HeldLease& lease : held) Release(lease.key, lease.token);
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
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        Call(key, {renew ? RedisClient::Command{"GETEX", key, "PX", ttl} : RedisClient::Command{"GET", key}}));
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
  KILN_ASSIGN_OR_RETURN(std::string value, EncodeBundle(bundle));
  if (!options_.value_key.empty()) value = SignValue(options_.value_key, value);
  if (value.size() > options_.max_value_bytes)
    return ResourceExhaustedError("shared tier: the entry is " + std::to_string(value.size()) +
                                  " bytes encoded, over the " + std::to_string(options_.max_value_bytes) +
                                  "-byte limit; kept locally only")
        .WithReason("shared_entry_too_large");
  const std::string key = EntryKey(entry.metadata.id);
  RedisClient::Command set = {"SET", key, value};
  const std::string ttl = std::to_string(options_.entry_ttl.count());
  if (options_.entry_ttl.count() > 0) {
    set.push_back("PX");
    set.push_back(ttl);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Call(key, {set}));
  if (!replies.front().IsStatus("OK")) {
    counters_.errors++;
    return ReplyError("SET", replies.front());
  }
  counters_.publishes++;
  return {};
}

SharedTier::Lease::Lease(SharedTier* tier, std::string key, std::string token)
    : tier_(tier), key_(std::move(key)), token_(std::move(token)), lost_(std::make_shared<std::atomic<bool>>(false)) {}

SharedTier::Lease::~Lease() {
  {
    std::lock_guard lock(tier_->leases_mu_);
    tier_->held_.erase(token_);
  }
  tier_->Release(key_, token_);
}

void SharedTier::Release(const std::string& key, const std::string& token) {
  // Best effort: a lease not released expires after lease_ttl.
  (void)Call(key, {{"EVAL", kReleaseScript, "1", key, token}});
}

Result<std::unique_ptr<SharedTier::Lease>> SharedTier::TryLease(const EntryId& id,
                                                              std::chrono::milliseconds& held_for) {
  const std::string key = LeaseKey(id);
  std::string token = NewToken();
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
  std::unique_ptr<Lease> lease(new Lease(this, key, token));
  {
    std::lock_guard lock(leases_mu_);
    held_[token] = HeldLease{key, token, lease->lost_};
  }
  return lease;
}

Result<SharedTier::Claim> SharedTier::TryClaim(const EntryId& id) {
  const std::string entry_key = EntryKey(id);
  Claim claim;
  // Cheap look first: the value may be megabytes.
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> exists, Call(entry_key, {{"EXISTS", entry_key}}));
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
                        .stale_leases = counters_.stale_leases};
}

}  // namespace kiln::cache::shared
