// TuneLeases against a real redis-server (started per test on a free
// loopback port; skipped only when redis-server is not installed).
#include "cache/shared/tune_lease.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/clock.h"
#include "cache/shared/testing/redis_server.h"
#include "cache/testing/test_store.h"

namespace kiln::cache::shared {
namespace {

using namespace std::chrono_literals;
using cache::testing::TestId;
using testing::RedisServer;

SharedTierOptions TuneLeaseTierOptions(const std::string& url_text, std::chrono::milliseconds lease) {
  SharedTierOptions options;
  auto url = ParseRedisUrl(url_text);
  EXPECT_TRUE(url) << url.error().ToString();
  if (url) options.url = *url;
  options.client.connection.connect_timeout = 300ms;
  options.client.connection.command_timeout = 1000ms;
  options.lease_ttl = lease;
  options.backoff_initial = 100ms;
  options.backoff_max = 400ms;
  return options;
}

TuneRecord TuneRecordFor(const EntryId& id, const std::string& server, const std::string& job) {
  TuneRecord record;
  record.entry = id;
  record.server = server;
  record.job_id = job;
  record.max_trials = 12;
  record.max_seconds = 2.5;
  record.seed = 5;
  record.created_ms = UnixNowMs();
  return record;
}

// Waits (bounded) until `done` holds; whether it did.
template <typename F>
bool TuneLeaseEventually(F done, std::chrono::milliseconds limit = 5s) {
  for (const auto give_up = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < give_up;
       std::this_thread::sleep_for(5ms)) {
    if (done()) return true;
  }
  return done();
}

class TuneLeasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
    redis_ = std::make_unique<RedisServer>();
    ASSERT_TRUE(redis_->ok()) << "redis-server did not start; see " << redis_->log();
  }
  RedisServer& redis() { return *redis_; }
  SharedTierOptions Options(std::chrono::milliseconds lease = 600ms) const {
    return TuneLeaseTierOptions(redis_->url(), lease);
  }
  bool Exists(const std::string& key) {
    Result<RedisReply> reply = redis().Command({"EXISTS", key});
    return reply && reply->integer == 1;
  }
  long long ListingSize(const std::string& tenant) {
    Result<RedisReply> reply = redis().Command({"HLEN", TuneLeases::ListingKey(tenant)});
    return reply ? reply->integer : -1;
  }

 private:
  std::unique_ptr<RedisServer> redis_;
};

TEST(TuneRecordTest, RoundTripsAndRefusesARecordWithoutAnEntry) {
  TuneRecord record = TuneRecordFor(TestId(4, "alice"), "host-a:8470", "0123456789abcdef");
  record.state = "running";
  record.background = true;
  record.takes_over = "fedcba9876543210";
  record.server = "tab\there";
  Result<TuneRecord> decoded = DecodeTuneRecord(EncodeTuneRecord(record));
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->entry, record.entry);
  EXPECT_EQ(decoded->server, "tab here");
  EXPECT_EQ(decoded->job_id, record.job_id);
  EXPECT_EQ(decoded->state, "running");
  EXPECT_TRUE(decoded->background);
  EXPECT_EQ(decoded->max_trials, 12);
  EXPECT_DOUBLE_EQ(decoded->max_seconds, 2.5);
  EXPECT_EQ(decoded->seed, 5u);
  EXPECT_EQ(decoded->created_ms, record.created_ms);
  EXPECT_EQ(decoded->takes_over, "fedcba9876543210");
  EXPECT_FALSE(DecodeTuneRecord("server=x\tjob=y"));
  EXPECT_FALSE(DecodeTuneRecord("tenant=a\tkey=nothex\tchip=v5e"));
}

TEST_F(TuneLeasesTest, OneServerHoldsAnEntrysLeaseAndTheOtherSeesItsJob) {
  SharedTier tier_a(Options()), tier_b(Options());
  TuneLeases a(tier_a), b(tier_b);
  const EntryId id = TestId(1);
  auto first = a.TryClaim(TuneRecordFor(id, "a:1", "00000000000000aa"));
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(first->lease);
  auto second = b.TryClaim(TuneRecordFor(id, "b:2", "00000000000000bb"));
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_FALSE(second->lease);
  ASSERT_TRUE(second->holder);
  EXPECT_EQ(second->holder->record.server, "a:1");
  EXPECT_EQ(second->holder->record.job_id, "00000000000000aa");
  EXPECT_TRUE(a.Holds(second->holder->holder_token));
  EXPECT_FALSE(b.Holds(second->holder->holder_token));
  // Renewed while held, past several TTLs.
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(first->lease->lost());
  auto third = b.TryClaim(TuneRecordFor(id, "b:2", "00000000000000cc"));
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->lease);
  // Both list it; it says running once its holder says so.
  first->lease->SetState("running");
  for (TuneLeases* leases : {&a, &b}) {
    auto listed = leases->List(id.tenant);
    ASSERT_TRUE(listed) << listed.error().ToString();
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_TRUE(listed->front().live);
    EXPECT_EQ(listed->front().record.server, "a:1");
    EXPECT_EQ(listed->front().record.state, "running");
  }
  auto tenants = b.Tenants();
  ASSERT_TRUE(tenants);
  EXPECT_EQ(*tenants, std::vector<std::string>{id.tenant});
  // Another tenant's listing is its own.
  auto other = b.List("bob");
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->empty());
}

TEST_F(TuneLeasesTest, AnEndedJobLeavesAMarkerAndNoListing) {
  SharedTier tier(Options());
  TuneLeases leases(tier);
  const EntryId id = TestId(2);
  auto claim = leases.TryClaim(TuneRecordFor(id, "a:1", "00000000000000aa"));
  ASSERT_TRUE(claim && claim->lease);
  EXPECT_TRUE(Exists(TuneLeases::LeaseKey(id)));
  EXPECT_EQ(ListingSize(id.tenant), 1);
  claim->lease->End("done");
  ASSERT_TRUE(TuneLeaseEventually([&] { return !Exists(TuneLeases::LeaseKey(id)) && ListingSize(id.tenant) == 0; }));
  auto finished = leases.Finished(id);
  ASSERT_TRUE(finished) << finished.error().ToString();
  ASSERT_TRUE(*finished);
  EXPECT_EQ((*finished)->state, "done");
  EXPECT_EQ((*finished)->job_id, "00000000000000aa");
  Result<RedisReply> ttl = redis().Command({"PTTL", TuneLeases::MarkerKey(id)});
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->integer, 0);
  // The lease is free again for a new job.
  auto again = leases.TryClaim(TuneRecordFor(id, "a:1", "00000000000000ab"));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->lease);
}

TEST_F(TuneLeasesTest, ADeadHoldersJobIsAnOrphanAndAHandOverIsOneAtOnce) {
  const EntryId dead_id = TestId(3), handed_id = TestId(4);
  // A server that died (SIGKILL): its lease runs out, its listing stays.
  const std::string dead_value = "dead:1:x\n" + EncodeTuneRecord(TuneRecordFor(dead_id, "dead:1", "00000000000000dd"));
  ASSERT_TRUE(redis().Command({"SET", TuneLeases::LeaseKey(dead_id), dead_value, "PX", "300"}));
  ASSERT_TRUE(
      redis().Command({"HSET", TuneLeases::ListingKey(dead_id.tenant), SharedTier::KeyPrefix(dead_id), dead_value}));
  ASSERT_TRUE(redis().Command({"SADD", TuneLeases::kTenantsKey, dead_id.tenant}));
  SharedTier tier(Options());
  TuneLeases leases(tier);
  auto handed = leases.TryClaim(TuneRecordFor(handed_id, "a:1", "00000000000000ee"));
  ASSERT_TRUE(handed && handed->lease);
  handed->lease->HandOver();
  ASSERT_TRUE(TuneLeaseEventually([&] { return !Exists(TuneLeases::LeaseKey(handed_id)); }));
  EXPECT_FALSE(Exists(TuneLeases::MarkerKey(handed_id)));

  std::vector<FleetTuneJob> orphans;
  ASSERT_TRUE(TuneLeaseEventually([&] {
    auto listed = leases.List(dead_id.tenant);
    orphans.clear();
    if (listed)
      for (const FleetTuneJob& job : *listed)
        if (!job.live) orphans.push_back(job);
    return orphans.size() == 2;
  }));
  // A takeover: the lease is free, the new job replaces the orphan.
  std::vector<std::unique_ptr<TuneLeases::Lease>> taken_over;
  for (const FleetTuneJob& orphan : orphans) {
    TuneRecord record = TuneRecordFor(orphan.record.entry, "b:2", "00000000000000ff");
    record.takes_over = orphan.record.job_id;
    auto taken = leases.TryClaim(record);
    ASSERT_TRUE(taken && taken->lease);
    taken_over.push_back(std::move(taken->lease));
  }
  auto listed = leases.List(dead_id.tenant);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  for (const FleetTuneJob& job : *listed) {
    EXPECT_TRUE(job.live);
    EXPECT_EQ(job.record.server, "b:2");
    EXPECT_TRUE(job.record.takes_over == "00000000000000dd" || job.record.takes_over == "00000000000000ee")
        << job.record.takes_over;
  }
}

TEST_F(TuneLeasesTest, AnAbandonedLeaseGoesWithItsListingAndPlantedLeasesHoldNothing) {
  SharedTier tier(Options());
  TuneLeases leases(tier);
  const EntryId id = TestId(5);
  {
    auto claim = leases.TryClaim(TuneRecordFor(id, "a:1", "00000000000000aa"));
    ASSERT_TRUE(claim && claim->lease);
  }  // dropped unended: the job was never queued
  ASSERT_TRUE(TuneLeaseEventually([&] { return !Exists(TuneLeases::LeaseKey(id)) && ListingSize(id.tenant) == 0; }));
  EXPECT_FALSE(Exists(TuneLeases::MarkerKey(id)));
  // A key with no TTL, or a longer one than any kiln's lease: no live kiln's.
  const EntryId planted = TestId(6), long_lived = TestId(7);
  ASSERT_TRUE(redis().Command({"SET", TuneLeases::LeaseKey(planted), "ghost"}));
  ASSERT_TRUE(redis().Command({"SET", TuneLeases::LeaseKey(long_lived), "ghost", "PX", "3600000"}));
  std::vector<std::unique_ptr<TuneLeases::Lease>> held;
  for (const EntryId& taken : {planted, long_lived}) {
    auto claim = leases.TryClaim(TuneRecordFor(taken, "a:1", "00000000000000ab"));
    ASSERT_TRUE(claim);
    EXPECT_TRUE(claim->lease);
    held.push_back(std::move(claim->lease));
  }
  // Garbage in a listing is dropped, not shown.
  ASSERT_TRUE(redis().Command({"HSET", TuneLeases::ListingKey("alice"), "kiln:{x}:v5e:v1:alice", "junk"}));
  auto listed = leases.List("alice");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), 2u);
  Result<RedisReply> junk = redis().Command({"HEXISTS", TuneLeases::ListingKey("alice"), "kiln:{x}:v5e:v1:alice"});
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->integer, 0);
}

TEST_F(TuneLeasesTest, ALeaseGoneWhileRedisRestartedIsTakenAgainByItsRenewal) {
  SharedTier tier(Options());
  TuneLeases leases(tier);
  const EntryId id = TestId(8);
  auto claim = leases.TryClaim(TuneRecordFor(id, "a:1", "00000000000000aa"));
  ASSERT_TRUE(claim && claim->lease);
  ASSERT_TRUE(redis().Command({"FLUSHALL"}));  // as a restarted Redis without persistence
  ASSERT_TRUE(TuneLeaseEventually([&] { return Exists(TuneLeases::LeaseKey(id)) && ListingSize(id.tenant) == 1; }));
  EXPECT_FALSE(claim->lease->lost());
  // Another holder's lease is not taken from it: this one is lost.
  ASSERT_TRUE(redis().Command({"SET", TuneLeases::LeaseKey(id), "other:1:x\ntenant=alice", "PX", "600"}));
  ASSERT_TRUE(TuneLeaseEventually([&] { return claim->lease->lost(); }));
  claim->lease->End("done");
  std::this_thread::sleep_for(100ms);
  Result<RedisReply> value = redis().Command({"GET", TuneLeases::LeaseKey(id)});
  ASSERT_TRUE(value);
  EXPECT_EQ(value->text, "other:1:x\ntenant=alice") << "an end deleted another holder's lease";
}

TEST_F(TuneLeasesTest, RedisDownFailsFast) {
  SharedTier tier(Options());
  TuneLeases leases(tier);
  redis().Kill();
  const auto start = std::chrono::steady_clock::now();
  auto claim = leases.TryClaim(TuneRecordFor(TestId(9), "a:1", "00000000000000aa"));
  EXPECT_FALSE(claim);
  EXPECT_FALSE(leases.List("alice"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

}  // namespace
}  // namespace kiln::cache::shared
