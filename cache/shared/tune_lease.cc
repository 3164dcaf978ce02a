#include "cache/shared/tune_lease.h"


#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "base/clock.h"
#include "cache/shared/server_identity.h"

namespace kiln::cache::shared {
namespace {

using TuneClock = std::chrono::steady_clock;

// Takes the lease when free or stale: {1} taken, {2} taken over a lease
// with no TTL or one past ARGV[2] ms, {0, pttl, value} held by a live
// holder.
constexpr const char* kTuneClaimScript =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end "
    "local t = redis.call('pttl', KEYS[1]) "
    "if t < 0 or t > tonumber(ARGV[2]) then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return {2} end "
    "return {0, t, redis.call('get', KEYS[1])}";
// Rewrites the lease (value and TTL) while its value starts with ARGV[1]
// ("TOKEN\n"), or takes it again when it is gone: 1; another holder's: 0.
constexpr const char* kTuneRenewScript =
    "local v = redis.call('get', KEYS[1]) "
    "if v and string.sub(v, 1, string.len(ARGV[1])) ~= ARGV[1] then return 0 end "
    "redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1";
// Deletes the lease unless another holder has it, and writes the finished
// marker (KEYS[2]) when ARGV[2] is not empty: 1; another holder's: 0.
constexpr const char* kTuneEndScript =
    "local v = redis.call('get', KEYS[1]) "
    "if v and string.sub(v, 1, string.len(ARGV[1])) ~= ARGV[1] then return 0 end "
    "if v then redis.call('del', KEYS[1]) end "
    "if ARGV[2] ~= '' then redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[3]) end "
    "return 1";
// Deletes the listing's field ARGV[1] while its value starts with ARGV[2].
constexpr const char* kTuneUnlistScript =
    "local v = redis.call('hget', KEYS[1], ARGV[1]) "
    "if v and string.sub(v, 1, string.len(ARGV[2])) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end "
    "return 0";

// "host:pid:trandom": unique per lease.
std::string NewTuneToken() { return NewLeaseToken("t"); }

std::string TuneValue(const std::string& token, const TuneRecord& record) {
  return token + "\n" + EncodeTuneRecord(record);
}

// The token and the record of a "TOKEN\nRECORD" value.
Result<std::pair<std::string, TuneRecord>> ParseTuneValue(std::string_view value) {
  const size_t newline = value.find('\n');
  if (newline == std::string_view::npos) return InvalidArgumentError("a tuning lease value without a token");
  KILN_ASSIGN_OR_RETURN(TuneRecord record, DecodeTuneRecord(value.substr(newline + 1)));
  return std::pair<std::string, TuneRecord>(std::string(value.substr(0, newline)), std::move(record));
}

Error TuneReplyError(const std::string& what, const RedisReply& reply) {
  return UnavailableError("shared tier: " + what + " answered " +
                          (reply.IsError() ? reply.text : std::string("an unexpected reply")))
      .WithReason("shared_unavailable");
}

std::string CleanTuneField(std::string_view value) {
  std::string text(value);
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

template <typename T>
bool ParseTuneInteger(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string EncodeTuneRecord(const TuneRecord& r) {
  char seconds[64];
  std::snprintf(seconds, sizeof(seconds), "%.17g", r.max_seconds);
  return "tenant=" + CleanTuneField(r.entry.tenant) + "\tkey=" + r.entry.key.Hex() +
         "\tchip=" + CleanTuneField(r.entry.chip) + "\tformat=" + std::to_string(r.entry.format_version) +
         "\tserver=" + CleanTuneField(r.server) + "\tjob=" + CleanTuneField(r.job_id) +
         "\tstate=" + CleanTuneField(r.state) + "\tbackground=" + (r.background ? "1" : "0") +
         "\tmax_trials=" + std::to_string(r.max_trials) + "\tmax_seconds=" + seconds +
         "\tseed=" + std::to_string(r.seed) + "\tcreated_ms=" + std::to_string(r.created_ms) +
         "\ttakes_over=" + CleanTuneField(r.takes_over);
}

Result<TuneRecord> DecodeTuneRecord(std::string_view text) {
  TuneRecord record;
  bool has_key = false;
  while (!text.empty()) {
    const size_t tab = text.find('\t');
    std::string_view field = text.substr(0, tab);
    text = tab == std::string_view::npos ? std::string_view() : text.substr(tab + 1);
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    bool ok = true;
    if (name == "tenant") {
      record.entry.tenant = value;
    } else if (name == "key") {
      Result<Hash128> key = ParseHash128(value);
      ok = key.has_value();
      if (key) record.entry.key = *key;
      has_key = ok;
    } else if (name == "chip") {
      record.entry.chip = value;
    } else if (name == "format") {
      ok = ParseTuneInteger(value, record.entry.format_version);
    } else if (name == "server") {
      record.server = value;
    } else if (name == "job") {
      record.job_id = value;
    } else if (name == "state") {
      record.state = value;
    } else if (name == "background") {
      record.background = value == "1";
    } else if (name == "max_trials") {
      ok = ParseTuneInteger(value, record.max_trials);
    } else if (name == "max_seconds") {
      const std::string copy(value);
      char* end = nullptr;
      record.max_seconds = std::strtod(copy.c_str(), &end);
      ok = end != nullptr && *end == '\0' && !copy.empty();
    } else if (name == "seed") {
      ok = ParseTuneInteger(value, record.seed);
    } else if (name == "created_ms") {
      ok = ParseTuneInteger(value, record.created_ms);
    } else if (name == "takes_over") {
      record.takes_over = value;
    }
    if (!ok) return InvalidArgumentError("tuning record: bad " + std::string(name) + " '" + std::string(value) + "'");
  }
  if (!has_key || record.entry.tenant.empty() || record.entry.chip.empty()) {
    return InvalidArgumentError("tuning record: no entry (tenant, key and chip)");
  }
  return record;
}

std::string TuneLeases::LeaseKey(const EntryId& id) { return SharedTier::KeyPrefix(id) + ":tune"; }
std::string TuneLeases::MarkerKey(const EntryId& id) { return SharedTier::KeyPrefix(id) + ":tune:done"; }
std::string TuneLeases::ListingKey(const std::string& tenant) { return "kiln:tune:jobs:" + tenant; }

TuneLeases::TuneLeases(SharedTier& tier, TuneLeaseOptions options) : tier_(tier), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

TuneLeases::~TuneLeases() {
  std::deque<PendingEnd> ends;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  {
    std::lock_guard lock(mu_);
    ends.swap(ends_);
  }
  for (const PendingEnd& end : ends) RunEnd(end);
}

TuneLeases::Lease::~Lease() {
  if (!ended_) owner_->Ending(token_, EndKind::kAbandon, "");
}

void TuneLeases::Lease::SetState(std::string_view state) { owner_->UpdateState(token_, state); }

void TuneLeases::Lease::End(std::string_view state) {
  if (ended_) return;
  ended_ = true;
  owner_->Ending(token_, EndKind::kEnd, state);
}

void TuneLeases::Lease::HandOver() {
  if (ended_) return;
  ended_ = true;
  owner_->Ending(token_, EndKind::kHandOver, "");
}

Result<TuneLeases::Claim> TuneLeases::TryClaim(const TuneRecord& record) {
  const std::string key = LeaseKey(record.entry);
  const std::string token = NewTuneToken();
  const std::string value = TuneValue(token, record);
  const std::string ttl = std::to_string(tier_.options().lease_ttl.count());
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        tier_.Run(key, {{"EVAL", kTuneClaimScript, "1", key, value, ttl}}));
  const RedisReply& reply = replies.front();
  if (reply.kind != RedisReply::Kind::kArray || reply.elements.empty() ||
      reply.elements[0].kind != RedisReply::Kind::kInteger) {
    return TuneReplyError("the tuning lease script", reply);
  }
  Claim claim;
  if (reply.elements[0].integer == 0) {
    FleetTuneJob holder;
    holder.live = true;
    holder.record = record;
    holder.record.server.clear();
    holder.record.job_id.clear();
    if (reply.elements.size() > 1)
      holder.lease_left = std::chrono::milliseconds(std::max(0LL, reply.elements[1].integer));
    if (reply.elements.size() > 2 && reply.elements[2].kind == RedisReply::Kind::kString) {
      holder.listed_value = reply.elements[2].text;
      if (Result<std::pair<std::string, TuneRecord>> parsed = ParseTuneValue(holder.listed_value); parsed) {
        holder.holder_token = parsed->first;
        holder.record = parsed->second;
      }
    }
    claim.holder = std::move(holder);
    return claim;
  }
  auto lost = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mu_);
    held_[token] = Held{record, lost};
  }
  claim.lease.reset(new Lease(this, token, lost));
  // Best effort: the next renewal lists it again.
  (void)WriteListing(token, record);
  return claim;
}

Status TuneLeases::WriteListing(const std::string& token, const TuneRecord& record) {
  const std::string listing = ListingKey(record.entry.tenant);
  const std::string field = SharedTier::KeyPrefix(record.entry);
  const std::string value = TuneValue(token, record);
  const std::string ttl = std::to_string(options_.listing_ttl.count());
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> listed,
                        tier_.Run(listing, {{"HSET", listing, field, value}, {"PEXPIRE", listing, ttl}}));
  for (const RedisReply& reply : listed)
    if (reply.IsError()) return TuneReplyError("HSET", reply);
  KILN_ASSIGN_OR_RETURN(
      std::vector<RedisReply> tenants,
      tier_.Run(kTenantsKey, {{"SADD", kTenantsKey, record.entry.tenant}, {"PEXPIRE", kTenantsKey, ttl}}));
  for (const RedisReply& reply : tenants)
    if (reply.IsError()) return TuneReplyError("SADD", reply);
  return {};
}

Result<bool> TuneLeases::Renew(const std::string& token, const TuneRecord& record) {
  const std::string key = LeaseKey(record.entry);
  const std::string prefix = token + "\n";
  const std::string value = TuneValue(token, record);
  const std::string ttl = std::to_string(tier_.options().lease_ttl.count());
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        tier_.Run(key, {{"EVAL", kTuneRenewScript, "1", key, prefix, value, ttl}}));
  if (replies.front().kind != RedisReply::Kind::kInteger)
    return TuneReplyError("the tuning renewal script", replies.front());
  if (replies.front().integer == 0) return false;
  (void)WriteListing(token, record);
  return true;
}

void TuneLeases::UpdateState(const std::string& token, std::string_view state) {
  TuneRecord record;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(token);
    if (it == held_.end() || it->second.lost->load()) return;
    it->second.record.state = state;
    record = it->second.record;
  }
  Result<bool> renewed = Renew(token, record);
  if (renewed && !*renewed) {
    std::lock_guard lock(mu_);
    if (auto it = held_.find(token); it != held_.end()) it->second.lost->store(true);
  }
}

void TuneLeases::Ending(const std::string& token, EndKind kind, std::string_view state) {
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(token);
    if (it == held_.end()) return;
    PendingEnd end{kind, std::move(it->second.record), token, TuneClock::now() + kEndRetry};
    if (kind == EndKind::kEnd) end.record.state = state;
    held_.erase(it);
    ends_.push_back(std::move(end));
  }
  wake_.notify_all();
}

bool TuneLeases::RunEnd(const PendingEnd& end) {
  const std::string key = LeaseKey(end.record.entry);
  const std::string marker = MarkerKey(end.record.entry);
  const std::string prefix = end.token + "\n";
  const std::string marker_value = end.kind == EndKind::kEnd ? TuneValue(end.token, end.record) : "";
  const std::string marker_ttl = std::to_string(options_.finished_ttl.count());
  Result<std::vector<RedisReply>> ended =
      tier_.Run(key, {{"EVAL", kTuneEndScript, "2", key, marker, prefix, marker_value, marker_ttl}});
  if (!ended) return false;
  if (end.kind == EndKind::kHandOver) return true;
  const std::string listing = ListingKey(end.record.entry.tenant);
  const std::string field = SharedTier::KeyPrefix(end.record.entry);
  Result<std::vector<RedisReply>> unlisted =
      tier_.Run(listing, {{"EVAL", kTuneUnlistScript, "1", listing, field, prefix}});
  return unlisted.has_value();
}

void TuneLeases::Loop() {
  const auto period = std::max(tier_.options().lease_ttl / 3, std::chrono::milliseconds(1));
  TuneClock::time_point next_renew = TuneClock::now() + period;
  std::unique_lock lock(mu_);
  size_t retrying = 0;  // ends at the front of ends_ that failed: retried at the next renewal
  while (!stopping_) {
    wake_.wait_until(lock, next_renew, [&] { return stopping_ || ends_.size() > retrying; });
    if (stopping_) return;
    const bool renew_now = TuneClock::now() >= next_renew;
    std::deque<PendingEnd> ends;
    if (renew_now || ends_.size() > retrying) ends.swap(ends_);
    std::vector<std::pair<std::string, TuneRecord>> held;
    if (renew_now) {
      for (const auto& [token, lease] : held_)
        if (!lease.lost->load()) held.emplace_back(token, lease.record);
    }
    lock.unlock();
    std::deque<PendingEnd> failed;
    for (PendingEnd& end : ends) {
      if (!RunEnd(end) && TuneClock::now() < end.give_up) failed.push_back(std::move(end));
    }
    std::vector<std::string> lost;
    for (const auto& [token, record] : held) {
      // Redis down: the lease may lapse; the job still runs here.
      Result<bool> renewed = Renew(token, record);
      if (renewed && !*renewed) lost.push_back(token);
    }
    lock.lock();
    for (const std::string& token : lost)
      if (auto it = held_.find(token); it != held_.end()) it->second.lost->store(true);
    retrying = failed.size();
    for (auto it = failed.rbegin(); it != failed.rend(); ++it) ends_.push_front(std::move(*it));
    if (renew_now) next_renew = TuneClock::now() + period;
  }
}

Result<std::optional<TuneRecord>> TuneLeases::Finished(const EntryId& id) {
  const std::string marker = MarkerKey(id);
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, tier_.Run(marker, {{"GET", marker}}));
  const RedisReply& reply = replies.front();
  if (reply.IsError()) return TuneReplyError("GET", reply);
  if (reply.kind != RedisReply::Kind::kString) return std::optional<TuneRecord>();
  Result<std::pair<std::string, TuneRecord>> parsed = ParseTuneValue(reply.text);
  if (!parsed) {
    // Unreadable: a job ended, that much is known.
    TuneRecord record;
    record.entry = id;
    record.state = "done";
    return std::optional<TuneRecord>(record);
  }
  return std::optional<TuneRecord>(std::move(parsed->second));
}

Result<std::vector<std::string>> TuneLeases::Tenants() {
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, tier_.Run(kTenantsKey, {{"SMEMBERS", kTenantsKey}}));
  const RedisReply& reply = replies.front();
  if (reply.IsError()) return TuneReplyError("SMEMBERS", reply);
  std::vector<std::string> tenants;
  for (const RedisReply& member : reply.elements)
    if (member.kind == RedisReply::Kind::kString) tenants.push_back(member.text);
  return tenants;
}

Status TuneLeases::Unlist(const FleetTuneJob& job) {
  const std::string listing = ListingKey(job.record.entry.tenant);
  const std::string field = SharedTier::KeyPrefix(job.record.entry);
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                        tier_.Run(listing, {{"EVAL", kTuneUnlistScript, "1", listing, field, job.listed_value}}));
  if (replies.front().IsError()) return TuneReplyError("the unlist script", replies.front());
  return {};
}

Result<std::vector<FleetTuneJob>> TuneLeases::List(const std::string& tenant) {
  const std::string listing = ListingKey(tenant);
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, tier_.Run(listing, {{"HGETALL", listing}}));
  const RedisReply& all = replies.front();
  if (all.IsError()) return TuneReplyError("HGETALL", all);
  std::vector<FleetTuneJob> jobs;
  const int64_t now_ms = UnixNowMs();
  for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    const std::string& field = all.elements[i].text;
    FleetTuneJob job;
    job.listed_value = all.elements[i + 1].text;
    Result<std::pair<std::string, TuneRecord>> listed = ParseTuneValue(job.listed_value);
    if (!listed || listed->second.entry.tenant != tenant || SharedTier::KeyPrefix(listed->second.entry) != field) {
      // Not a job of this tenant's: nothing kiln wrote. Dropped.
      (void)tier_.Run(listing, {{"EVAL", kTuneUnlistScript, "1", listing, field, job.listed_value}});
      continue;
    }
    job.record = listed->second;
    const std::string key = LeaseKey(job.record.entry);
    const std::string marker = MarkerKey(job.record.entry);
    KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> lease,
                          tier_.Run(key, {{"GET", key}, {"PTTL", key}, {"EXISTS", marker}}));
    if (lease[0].kind == RedisReply::Kind::kString) {
      job.live = true;
      job.lease_left = std::chrono::milliseconds(std::max(0LL, lease[1].integer));
      if (Result<std::pair<std::string, TuneRecord>> held = ParseTuneValue(lease[0].text); held) {
        job.holder_token = held->first;
        job.record = held->second;
      }
      jobs.push_back(std::move(job));
      continue;
    }
    if (lease[2].integer == 1 || job.record.created_ms + options_.orphan_keep.count() < now_ms) {
      (void)Unlist(job);  // finished, or an orphan nobody took over in time
      continue;
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

bool TuneLeases::Holds(const std::string& token) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(token);
  return it != held_.end() && !it->second.lost->load();
}

}  // namespace kiln::cache::shared
