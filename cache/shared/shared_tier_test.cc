// SharedTier against a real redis-server (started per test on a free
// loopback port; skipped only when redis-server is not installed).
#include "cache/shared/shared_tier.h"

#include <gtest/gtest.h>

#include <future>
#include <set>

#include "cache/shared/testing/redis_server.h"
#include "cache/testing/test_store.h"
#include "cache/testing/test_program.h"

namespace kiln::cache::shared {
namespace {

using namespace std::chrono_literals;
using cache::testing::TestExecutable;
using cache::testing::TestId;
using testing::RedisCluster;
using testing::RedisServer;

#define REQUIRE_REDIS()                                                                           \
  if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)"

Status AcceptAll(const EntryId&, std::string_view) { return {}; }

SharedTierOptions OptionsFor(const std::string& url_text) {
  SharedTierOptions options;
  auto url = ParseRedisUrl(url_text);
  EXPECT_TRUE(url) << url.error().ToString();
  if (url) options.url = *url;
  options.verify = AcceptAll;
  options.client.connection.connect_timeout = 300ms;
  options.client.connection.command_timeout = 500ms;
  options.lease_ttl = 600ms;
  options.backoff_initial = 100ms;
  options.backoff_max = 400ms;
  options.wait_limit = 20s;
  return options;
}

// A fresh redis-server per test, with default flags.
class SharedTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_REDIS();
    redis_ = std::make_unique<RedisServer>();
    ASSERT_TRUE(redis_->ok()) << "redis-server did not start; see " << redis_->log();
  }
  RedisServer& redis() { return *redis_; }
  SharedTierOptions Options() const { return OptionsFor(redis_->url()); }

 private:
  std::unique_ptr<RedisServer> redis_;
};

BundleEntry EntryFor(const EntryId& id, uint64_t n = 1) {
  BundleEntry entry;
  entry.metadata.id = id;
  entry.metadata.options = "opt_level=2";
  entry.metadata.compile_seconds = 2.5;
  entry.metadata.device_seconds = 0.001;
  entry.metadata.created_ms = 1'764'547'200'000;  // 2025-12-01
  entry.components = {{"entry body", Hash128{n, 9}}};
  entry.request_hashes = {Hash128{n, 77}};
  entry.executable = TestExecutable(n, 20000);
  return entry;
}

TEST_F(SharedTierTest, PublishedEntryIsFetchedWholeAndOnlyUnderItsOwnId) {
  SharedTier tier(Options());
  const EntryId id = TestId(1);
  auto absent = tier.Fetch(id);
  ASSERT_TRUE(absent) << absent.error().ToString();
  EXPECT_FALSE(*absent);

  ASSERT_TRUE(tier.Publish(EntryFor(id)));
  auto fetched = tier.Fetch(id);
  ASSERT_TRUE(fetched && *fetched);
  EXPECT_EQ((*fetched)->executable, TestExecutable(1, 20000));
  EXPECT_EQ((*fetched)->metadata.compile_seconds, 2.5);
  EXPECT_EQ((*fetched)->request_hashes, std::vector<Hash128>{(Hash128{1, 77})});

  // Another tenant, chip or key is another Redis key.
  for (const EntryId& other : {TestId(1, "bob"), TestId(1, "alice", "v6e"), TestId(2)}) {
    auto miss = tier.Fetch(other);
    ASSERT_TRUE(miss);
    EXPECT_FALSE(*miss) << other.ToString();
  }
  EXPECT_EQ(tier.Counters().hits, 1);
  EXPECT_EQ(tier.Counters().publishes, 1);

  // With a TTL the entry expires on its own, unless it is used: a fetch
  // renews it.
  auto presence = tier.Where(id);
  ASSERT_TRUE(presence && *presence);
  EXPECT_GT((*presence)->bytes, 0u);
  EXPECT_GT((*presence)->expires_in_ms, 0);
  ASSERT_TRUE(redis().Command({"PEXPIRE", SharedTier::EntryKey(id), "5000"}));
  ASSERT_TRUE(tier.Fetch(id));
  auto renewed = redis().Command({"PTTL", SharedTier::EntryKey(id)});
  ASSERT_TRUE(renewed);
  EXPECT_GT(renewed->integer, 24 * 3600 * 1000) << "a fetch did not renew the entry's time to live";
}

TEST_F(SharedTierTest, CorruptOrMisfiledValuesAreNeverServed) {
  SharedTier tier(Options());
  const EntryId id = TestId(1);
  ASSERT_TRUE(tier.Publish(EntryFor(id)));
  // Flip one byte of the stored value.
  auto value = redis().Command({"GET", SharedTier::EntryKey(id)});
  ASSERT_TRUE(value);
  std::string damaged = value->text;
  damaged[damaged.size() / 2] ^= 0x40;
  ASSERT_TRUE(redis().Command({"SET", SharedTier::EntryKey(id), damaged}));
  auto fetched = tier.Fetch(id);
  ASSERT_TRUE(fetched);
  EXPECT_FALSE(*fetched);
  EXPECT_EQ(tier.Counters().corrupt, 1);

  // A whole, valid value for another entry, stored under this id's key.
  ASSERT_TRUE(tier.Publish(EntryFor(TestId(2), 2)));
  auto other = redis().Command({"GET", SharedTier::EntryKey(TestId(2))});
  ASSERT_TRUE(redis().Command({"SET", SharedTier::EntryKey(id), other->text}));
  fetched = tier.Fetch(id);
  ASSERT_TRUE(fetched);
  EXPECT_FALSE(*fetched);
  EXPECT_EQ(tier.Counters().corrupt, 2);

  // The real verifier refuses bytes that are not a program.
  SharedTierOptions strict = Options();
  strict.verify = VerifyProgramBytes;
  SharedTier strict_tier(strict);
  auto refused = strict_tier.Fetch(TestId(2));
  ASSERT_TRUE(refused);
  EXPECT_FALSE(*refused);
  EXPECT_EQ(strict_tier.Counters().corrupt, 1);
}

// Found by a hostile probe: anyone who could write to Redis could plant a
// well-formed value for any key (XXH3 authenticates nothing). With the
// fleet's key, only values its servers signed are used.
TEST_F(SharedTierTest, WithAFleetKeyOnlySignedValuesAreUsed) {
  SharedTierOptions keyed = Options();
  keyed.value_key = "0123456789abcdef-fleet-key";
  SharedTier a(keyed), b(keyed);
  SharedTierOptions other_key = keyed;
  other_key.value_key = "another-fleet-key-entirely";
  SharedTier stranger(other_key);
  SharedTier unkeyed(Options());

  const EntryId id = TestId(21);
  ASSERT_TRUE(a.Publish(EntryFor(id)));
  auto fetched = b.Fetch(id);
  ASSERT_TRUE(fetched && *fetched) << "a server with the key reads what another signed";
  auto refused = stranger.Fetch(id);
  ASSERT_TRUE(refused);
  EXPECT_FALSE(*refused);
  EXPECT_EQ(stranger.Counters().corrupt, 1);
  auto read = unkeyed.Fetch(id);  // no key: reads it, checking what it can
  ASSERT_TRUE(read && *read);

  // A value planted without a MAC (by a server without the key, or by hand).
  const EntryId planted = TestId(22);
  ASSERT_TRUE(unkeyed.Publish(EntryFor(planted)));
  auto unsigned_value = b.Fetch(planted);
  ASSERT_TRUE(unsigned_value);
  EXPECT_FALSE(*unsigned_value);
  EXPECT_EQ(b.Counters().corrupt, 1);
}

// A real program, compiled for another chip (or key), filed under an id:
// refused by the identity check every reader of an entry makes.
TEST_F(SharedTierTest, AProgramFiledUnderAnotherIdIsNeverServed) {
  SharedTierOptions strict = Options();
  strict.verify = VerifyProgramBytes;
  SharedTier tier(strict);
  const EntryId id = TestId(23);
  BundleEntry entry = EntryFor(id);
  entry.executable = cache::testing::TestProgramBytes(id.key, "tpu7x");  // filed as v5e
  entry.metadata.raw_bytes = entry.executable.size();
  ASSERT_TRUE(tier.Publish(entry));
  auto fetched = tier.Fetch(id);
  ASSERT_TRUE(fetched);
  EXPECT_FALSE(*fetched);
  EXPECT_EQ(tier.Counters().corrupt, 1);
  entry.executable = cache::testing::TestProgramBytes(id.key, id.chip);
  ASSERT_TRUE(tier.Publish(entry));
  fetched = tier.Fetch(id);
  ASSERT_TRUE(fetched && *fetched) << "the same program filed under its own id is served";
}

TEST_F(SharedTierTest, OneLeaseAtATimeAndWaitersGetThePublishedEntry) {
  SharedTier a(Options());
  SharedTier b(Options());
  const EntryId id = TestId(7);
  auto leader = a.FetchOrLease(id);
  ASSERT_TRUE(leader) << leader.error().ToString();
  ASSERT_TRUE(leader->lease);
  EXPECT_FALSE(leader->entry);

  auto waiter = std::async(std::launch::async, [&] { return b.FetchOrLease(id); });
  // The lease outlives several TTLs while its holder renews it.
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(waiter.wait_for(0ms), std::future_status::timeout);
  EXPECT_FALSE(leader->lease->lost());
  ASSERT_TRUE(a.Publish(EntryFor(id)));
  leader->lease.reset();

  auto joined = waiter.get();
  ASSERT_TRUE(joined) << joined.error().ToString();
  EXPECT_TRUE(joined->waited);
  ASSERT_TRUE(joined->entry);
  EXPECT_FALSE(joined->lease);
  EXPECT_EQ(b.Counters().lease_waits, 1);
  EXPECT_EQ(b.Counters().takeovers, 0);
  // Released: nobody holds the lease now.
  auto lease = redis().Command({"EXISTS", SharedTier::LeaseKey(id)});
  EXPECT_EQ(lease->integer, 0);
}

TEST_F(SharedTierTest, ALeaseWhoseHolderDiedIsTakenOverAfterItExpires) {
  SharedTier tier(Options());
  const EntryId id = TestId(3);
  // A holder that died: its lease is there, nobody renews it.
  ASSERT_TRUE(redis().Command({"SET", SharedTier::LeaseKey(id), "dead-server:1:0", "PX", "500"}));
  const auto start = std::chrono::steady_clock::now();
  auto claim = tier.FetchOrLease(id);
  ASSERT_TRUE(claim) << claim.error().ToString();
  EXPECT_TRUE(claim->lease);
  EXPECT_TRUE(claim->waited);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 400ms);
  EXPECT_EQ(tier.Counters().takeovers, 1);
}

TEST_F(SharedTierTest, RedisDownFailsFastBacksOffAndComesBack) {
  SharedTierOptions options = Options();
  options.backoff_initial = options.backoff_max = 1s;  // long enough to see, whatever the load
  SharedTier tier(options);
  ASSERT_TRUE(tier.Publish(EntryFor(TestId(1))));
  redis().Kill();

  auto failed = tier.Fetch(TestId(1));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().reason(), "shared_unavailable");
  EXPECT_FALSE(tier.Health().up);
  // While backing off, no network at all: refused by the backoff itself.
  auto backing_off = tier.Fetch(TestId(1));
  ASSERT_FALSE(backing_off);
  EXPECT_NE(backing_off.error().message.find("next try in"), std::string::npos) << backing_off.error().message;
  EXPECT_GT(tier.Health().retry_in_ms, 0);
  EXPECT_NE(tier.Health().last_error.find("cannot connect"), std::string::npos) << tier.Health().last_error;

  ASSERT_TRUE(redis().Restart());
  std::this_thread::sleep_for(1100ms);  // past the backoff
  auto back = tier.Fetch(TestId(1));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_FALSE(*back);  // nothing persisted across the restart
  EXPECT_TRUE(tier.Health().up);
  EXPECT_GE(tier.Counters().errors, 2);
}

TEST_F(SharedTierTest, ASlowRedisTimesOutInsteadOfHanging) {
  SharedTier tier(Options());
  ASSERT_TRUE(tier.Fetch(TestId(1)));  // a pooled connection
  redis().Pause();
  const auto start = std::chrono::steady_clock::now();
  auto slow = tier.Fetch(TestId(1));
  const auto took = std::chrono::steady_clock::now() - start;
  redis().Resume();
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().reason(), "shared_unavailable");
  EXPECT_NE(slow.error().message.find("timed out"), std::string::npos) << slow.error().message;
  EXPECT_LT(took, 10s);  // the 500 ms deadline, not a hang
}

TEST(SharedTierSetupTest, PasswordsAreSentNeverShown) {
  REQUIRE_REDIS();
  RedisServer redis(RedisServer::Flags{.extra = {"--requirepass", "hunter2"}});
  ASSERT_TRUE(redis.ok());
  SharedTier wrong(OptionsFor("redis://:wrongpass@127.0.0.1:" + std::to_string(redis.port())));
  auto refused = wrong.Fetch(TestId(1));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason(), "shared_auth_failed");
  EXPECT_EQ(refused.error().message.find("wrongpass"), std::string::npos);
  EXPECT_EQ(wrong.Health().url.find("wrongpass"), std::string::npos);

  auto url = ParseRedisUrl("redis://127.0.0.1:" + std::to_string(redis.port()), "", "hunter2");
  ASSERT_TRUE(url);
  SharedTierOptions options = OptionsFor(redis.url());
  options.url = *url;
  SharedTier right(options);
  ASSERT_TRUE(right.Publish(EntryFor(TestId(1))));
  auto fetched = right.Fetch(TestId(1));
  ASSERT_TRUE(fetched && *fetched);
}

TEST_F(SharedTierTest, SelectsTheUrlsDatabase) {
  SharedTier db5(OptionsFor(redis().url() + "/5"));
  SharedTier db0(Options());
  ASSERT_TRUE(db5.Publish(EntryFor(TestId(1))));
  auto in0 = db0.Fetch(TestId(1));
  ASSERT_TRUE(in0);
  EXPECT_FALSE(*in0);
  auto in5 = db5.Fetch(TestId(1));
  ASSERT_TRUE(in5 && *in5);
}

TEST(SharedTierSetupTest, SpeaksTlsAndRefusesAnUntrustedCertificate) {
  REQUIRE_REDIS();
  RedisServer redis(RedisServer::Flags{.tls = true});
  if (!redis.ok()) GTEST_SKIP() << "this redis-server cannot serve TLS (see " << redis.log() << ")";
  SharedTierOptions untrusted = OptionsFor(redis.url());
  SharedTier refused_tier(untrusted);
  auto refused = refused_tier.Fetch(TestId(1));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("certificate"), std::string::npos) << refused.error().message;

  SharedTierOptions trusted = OptionsFor(redis.url());
  trusted.client.connection.tls_ca_file = redis.ca_file();
  SharedTier tier(trusted);
  ASSERT_TRUE(tier.Publish(EntryFor(TestId(1))));
  auto fetched = tier.Fetch(TestId(1));
  ASSERT_TRUE(fetched && *fetched) << (fetched ? "absent" : fetched.error().ToString());
  EXPECT_EQ((*fetched)->executable, TestExecutable(1, 20000));
}

TEST(SharedTierSetupTest, PresentsAClientCertificateWhenRedisAsksForOne) {
  REQUIRE_REDIS();
  RedisServer redis(RedisServer::Flags{.tls = true, .tls_client_certificates = true});
  if (!redis.ok()) GTEST_SKIP() << "this redis-server cannot serve TLS (see " << redis.log() << ")";
  SharedTierOptions without = OptionsFor(redis.url());
  without.client.connection.tls_ca_file = redis.ca_file();
  SharedTier refused(without);
  EXPECT_FALSE(refused.Probe());
  SharedTierOptions with = without;
  with.client.connection.tls_cert_file = redis.ca_file();
  with.client.connection.tls_key_file = redis.key_file();
  SharedTier tier(with);
  Status probe = tier.Probe();
  EXPECT_TRUE(probe) << probe.error().ToString();
}

TEST(SharedTierSetupTest, WorksAcrossAClustersSlotsFromOneSeed) {
  REQUIRE_REDIS();
  RedisCluster cluster;
  if (!cluster.ok()) GTEST_SKIP() << "could not form a Redis Cluster (redis-cli --cluster create failed)";
  // Two seeds, one of which is enough; keys spread over every node.
  SharedTier tier(OptionsFor("redis://127.0.0.1:" + std::to_string(cluster.node(0).port()) + ",127.0.0.1:" +
                             std::to_string(cluster.node(1).port())));
  std::set<uint16_t> slots;
  for (uint64_t n = 1; n <= 24; ++n) {
    const EntryId id = TestId(n);
    slots.insert(HashSlot(SharedTier::EntryKey(id)));
    EXPECT_EQ(HashSlot(SharedTier::EntryKey(id)), HashSlot(SharedTier::LeaseKey(id)));
    EXPECT_EQ(HashSlot(SharedTier::EntryKey(id)), HashSlot(SharedTier::VersionKey(id)));
    EXPECT_EQ(HashSlot(SharedTier::EntryKey(id)), HashSlot(SharedTier::FailureKey(id)));
    ASSERT_TRUE(tier.Publish(EntryFor(id, n))) << n;
    auto claim = tier.FetchOrLease(id);
    ASSERT_TRUE(claim) << claim.error().ToString();
    ASSERT_TRUE(claim->entry) << n;
    EXPECT_EQ(claim->entry->executable, TestExecutable(n, 20000));
  }
  EXPECT_GT(slots.size(), 20u);
  int64_t keys = 0;
  for (size_t i = 0; i < 3; ++i) {
    auto size = cluster.node(i).Command({"DBSIZE"});
    ASSERT_TRUE(size);
    EXPECT_GT(size->integer, 0) << "node " << i << " holds none of the entries";
    keys += size->integer;
  }
  EXPECT_EQ(keys, 24 * 2) << "each entry and its version";
}

TEST(HashSlotTest, MatchesRedisClusterSpecification) {
  // The specification's example: CRC16("123456789") = 0x31C3.
  EXPECT_EQ(HashSlot("123456789"), 0x31C3 & 16383);
  EXPECT_EQ(HashSlot("{user1000}.following"), HashSlot("user1000"));
  EXPECT_EQ(HashSlot("foo{}{bar}"), HashSlot("foo{}{bar}"));  // empty tag: the whole key
  EXPECT_NE(HashSlot("foo{}{bar}"), HashSlot("bar"));
}

}  // namespace
}  // namespace kiln::cache::shared
