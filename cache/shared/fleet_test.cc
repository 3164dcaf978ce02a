// The fleet's events, versions and failure markers, against a real
// redis-server on a free loopback port (skipped only when redis-server is
// not installed).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/version.h"
#include "cache/shared/fleet_events.h"
#include "cache/shared/fleet_subscriber.h"
#include "cache/shared/lease_waiter.h"
#include "cache/shared/shared_tier.h"
#include "cache/shared/testing/redis_server.h"
#include "cache/testing/test_program.h"
#include "cache/testing/test_store.h"

namespace kiln::cache::shared {
namespace {

using namespace std::chrono_literals;
using cache::testing::TestExecutable;
using cache::testing::TestId;
using testing::RedisServer;

constexpr int64_t kFleetEpochMs = 1'764'547'200'000;  // 2025-12-01: times are checked on the way in

Status FleetAcceptAll(const EntryId&, std::string_view) { return {}; }

SharedTierOptions FleetOptions(const RedisServer& redis) {
  SharedTierOptions options;
  options.url = *ParseRedisUrl(redis.url());
  options.verify = FleetAcceptAll;
  options.client.connection.connect_timeout = 300ms;
  options.client.connection.command_timeout = 500ms;
  options.lease_ttl = 2s;
  options.backoff_initial = 50ms;
  options.backoff_max = 200ms;
  return options;
}

BundleEntry FleetEntry(const EntryId& id, PlanKind plan, int64_t created_ms, uint64_t n) {
  BundleEntry entry;
  entry.metadata.id = id;
  entry.metadata.options = "opt_level=2";
  entry.metadata.plan_kind = plan;
  entry.metadata.compile_seconds = 1;
  entry.metadata.device_seconds = 0.001;
  entry.metadata.created_ms = kFleetEpochMs + created_ms;
  entry.executable = TestExecutable(n, 2000);
  return entry;
}

// Collects what a subscriber hands on.
struct EventLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<FleetEvent> events;
  int64_t subscriptions = 0;

  FleetSubscriber::Handlers Handlers() {
    return {.on_event =
                [this](const FleetEvent& event) {
                  std::lock_guard lock(mu);
                  events.push_back(event);
                  cv.notify_all();
                },
            .on_subscribed =
                [this](int64_t n) {
                  std::lock_guard lock(mu);
                  subscriptions = n;
                  cv.notify_all();
                }};
  }
  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, done);
  }
};

#define FLEET_REQUIRE_REDIS(redis)                                                                          \
  if (!RedisServer::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)"; \
  RedisServer redis;                                                                                        \
  ASSERT_TRUE(redis.ok()) << "redis-server did not start; see " << redis.log()

TEST(FleetEventsTest, EventsAndVersionsRoundTripAndMalformedOnesAreIgnored) {
  const FleetEvent published{.kind = FleetEventKind::kPublished,
                             .id = TestId(7),
                             .version = {.rank = 1, .created_ms = 1'764'547'200'123}};
  std::optional<FleetEvent> back = DecodeFleetEvent(EncodeFleetEvent(published));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->id, published.id);
  EXPECT_EQ(back->version, published.version);
  const FleetEvent released{.kind = FleetEventKind::kReleased, .id = TestId(8), .version = {}};
  back = DecodeFleetEvent(EncodeFleetEvent(released));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, FleetEventKind::kReleased);
  for (std::string_view bad : {"", "published", "published\ta\tb\tc\t1\t0:1", "gone\tt\t00\tv5e\t1",
                               "released\tbad name!\t00000000000000000000000000000001\tv5e\t1"}) {
    EXPECT_FALSE(DecodeFleetEvent(bad)) << bad;
  }
  const EntryVersion heuristic{.rank = 0, .created_ms = 2000}, tuned{.rank = 1, .created_ms = 1000};
  EXPECT_TRUE(tuned.NewerThan(heuristic)) << "a tuned plan is newer than any heuristic one";
  EXPECT_FALSE(heuristic.NewerThan(tuned));
  EXPECT_TRUE((EntryVersion{.rank = 0, .created_ms = 2001}).NewerThan(heuristic));
  EXPECT_EQ(ParseVersion(FormatVersion(tuned)), tuned);
  EXPECT_FALSE(ParseVersion("2:5"));
  EXPECT_FALSE(ParseVersion("1:x"));
}

TEST(FleetTest, ATunedEntryIsNeverReplacedByAnOlderHeuristicOne) {
  FLEET_REQUIRE_REDIS(redis);
  SharedTier a(FleetOptions(redis)), b(FleetOptions(redis));
  const EntryId id = TestId(3);
  ASSERT_TRUE(a.Publish(FleetEntry(id, PlanKind::kHeuristic, 1000, 1)));
  ASSERT_TRUE(a.Publish(FleetEntry(id, PlanKind::kTuned, 2000, 2)));
  // A server that compiled the heuristic plan late (Redis was down when it
  // looked) publishes it: refused, the tuned one stays.
  Status late = b.Publish(FleetEntry(id, PlanKind::kHeuristic, 3000, 3));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().reason(), "shared_newer_entry");
  EXPECT_EQ(b.Counters().publishes_refused, 1);
  auto fetched = b.Fetch(id);
  ASSERT_TRUE(fetched && *fetched);
  EXPECT_EQ((*fetched)->metadata.plan_kind, PlanKind::kTuned);
  EXPECT_EQ((*fetched)->executable, TestExecutable(2, 2000));
  auto version = b.StoredVersion(id);
  ASSERT_TRUE(version && *version);
  EXPECT_EQ(**version, (EntryVersion{.rank = 1, .created_ms = kFleetEpochMs + 2000}));
  // Once the entry itself is gone (evicted), its version holds nothing back.
  ASSERT_TRUE(redis.Command({"DEL", SharedTier::EntryKey(id)}));
  EXPECT_TRUE(b.Publish(FleetEntry(id, PlanKind::kHeuristic, 3000, 3)));
}

TEST(FleetTest, SubscribersHearPublishesReleasesAndFailuresAndResubscribeAfterARestart) {
  FLEET_REQUIRE_REDIS(redis);
  SharedTier a(FleetOptions(redis)), b(FleetOptions(redis));
  EventLog log;
  FleetSubscriber subscriber([&b] { return b.OpenSubscription(); }, log.Handlers(),
                             FleetSubscriberOptions{.retry_initial = 20ms, .retry_max = 100ms, .tick = 20ms});
  ASSERT_TRUE(log.WaitFor([&] { return log.subscriptions == 1; }));
  const EntryId id = TestId(4);
  {
    auto claim = a.TryClaim(id);
    ASSERT_TRUE(claim && claim->lease);
  }  // let go without a publish
  ASSERT_TRUE(a.Publish(FleetEntry(id, PlanKind::kTuned, 5000, 1)));
  ASSERT_TRUE(a.PublishFailure(TestId(5), SharedFailure{.code = ErrorCode::kInvalidArgument,
                                                         .reason = "compile_failed",
                                                         .message = "no",
                                                         .found_by = {}}));
  ASSERT_TRUE(log.WaitFor([&] { return log.events.size() >= 3; }));
  {
    std::lock_guard lock(log.mu);
    EXPECT_EQ(log.events[0].kind, FleetEventKind::kReleased);
    EXPECT_EQ(log.events[0].id, id);
    EXPECT_EQ(log.events[1].kind, FleetEventKind::kPublished);
    EXPECT_EQ(log.events[1].version, (EntryVersion{.rank = 1, .created_ms = kFleetEpochMs + 5000}));
    EXPECT_EQ(log.events[2].kind, FleetEventKind::kFailed);
    EXPECT_EQ(log.events[2].id, TestId(5));
  }
  // Messages that are not events are ignored; a restart is a new
  // subscription (what was sent meanwhile was missed, and it says so).
  ASSERT_TRUE(redis.Command({"PUBLISH", std::string(kFleetChannel), "not an event"}));
  ASSERT_TRUE(redis.Restart());
  ASSERT_TRUE(log.WaitFor([&] { return log.subscriptions == 2; }));
  // The first call after the restart may find a pooled connection dead.
  Status published = a.Publish(FleetEntry(TestId(6), PlanKind::kHeuristic, 6000, 2));
  for (int i = 0; i < 20 && !published; ++i) {
    std::this_thread::sleep_for(50ms);
    published = a.Publish(FleetEntry(TestId(6), PlanKind::kHeuristic, 6000, 2));
  }
  ASSERT_TRUE(published) << published.error().ToString();
  ASSERT_TRUE(log.WaitFor([&] { return log.events.size() >= 4; }));
  std::lock_guard lock(log.mu);
  EXPECT_EQ(log.events.size(), 4u);
  EXPECT_EQ(log.events[3].id, TestId(6));
}

TEST(FleetTest, AMarkedFailureIsAnsweredUntilAnEntryOrAnotherKilnVersionComes) {
  FLEET_REQUIRE_REDIS(redis);
  SharedTier a(FleetOptions(redis)), b(FleetOptions(redis));
  const EntryId id = TestId(9);
  ASSERT_TRUE(a.PublishFailure(id, SharedFailure{.code = ErrorCode::kResourceExhausted,
                                                 .reason = "does_not_fit",
                                                 .message = "needs 40 GiB of HBM;\nthe chip has 16",
                                                 .found_by = {}}));
  auto claim = b.TryClaim(id);
  ASSERT_TRUE(claim) << claim.error().ToString();
  ASSERT_TRUE(claim->failure);
  EXPECT_FALSE(claim->lease) << "a marked failure takes no lease";
  EXPECT_EQ(claim->failure->code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(claim->failure->reason, "does_not_fit");
  EXPECT_EQ(claim->failure->message, "needs 40 GiB of HBM;\nthe chip has 16");
  EXPECT_FALSE(claim->failure->found_by.empty());
  EXPECT_EQ(b.Counters().failures_found, 1);
  auto ttl = redis.Command({"PTTL", SharedTier::FailureKey(id)});
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->integer, 0) << "a failure marker always expires";

  // Another kiln version compiles it again.
  ASSERT_TRUE(redis.Command({"SET", SharedTier::FailureKey(id),
                             "KILNFAIL1\n0.0.1/1\n0\ncompile_failed\nelsewhere:1\nan older compiler's"}));
  claim = b.TryClaim(id);
  ASSERT_TRUE(claim);
  EXPECT_FALSE(claim->failure);
  EXPECT_TRUE(claim->lease);
  claim->lease.reset();

  // An entry published later clears the marker.
  ASSERT_TRUE(a.PublishFailure(id, SharedFailure{.code = ErrorCode::kInvalidArgument, .reason = "compile_failed",
                                                 .message = "x", .found_by = {}}));
  ASSERT_TRUE(a.Publish(FleetEntry(id, PlanKind::kHeuristic, 1000, 1)));
  claim = b.TryClaim(id);
  ASSERT_TRUE(claim);
  EXPECT_FALSE(claim->failure);
  EXPECT_TRUE(claim->entry);
}

TEST(FleetTest, WithAFleetKeyOnlySignedFailureMarkersCount) {
  FLEET_REQUIRE_REDIS(redis);
  SharedTierOptions keyed = FleetOptions(redis);
  keyed.value_key = std::string(32, 'k');
  SharedTier a(keyed), b(keyed);
  const EntryId id = TestId(10);
  const std::string planted =
      "KILNFAIL1\n" + std::string(kKilnVersion) + "/" + std::to_string(kCompilerFormatVersion) +
      "\n0\ncompile_failed\nmallory:1\nplanted";
  ASSERT_TRUE(redis.Command({"SET", SharedTier::FailureKey(id), planted}));
  auto claim = b.TryClaim(id);
  ASSERT_TRUE(claim);
  EXPECT_FALSE(claim->failure) << "an unsigned marker holds nothing back";
  claim->lease.reset();
  ASSERT_TRUE(a.PublishFailure(id, SharedFailure{.code = ErrorCode::kInvalidArgument, .reason = "compile_failed",
                                                 .message = "real", .found_by = {}}));
  claim = b.TryClaim(id);
  ASSERT_TRUE(claim && claim->failure);
  EXPECT_EQ(claim->failure->message, "real");
}

TEST(FleetTest, ANudgeEndsAWaitThatWouldOtherwisePollAnHourLater) {
  FLEET_REQUIRE_REDIS(redis);
  SharedTierOptions slow = FleetOptions(redis);
  slow.poll_initial = std::chrono::hours(1);
  slow.poll_max = std::chrono::hours(1);
  slow.wait_limit = std::chrono::hours(2);
  SharedTier holder(FleetOptions(redis)), waiter_tier(slow);
  const EntryId id = TestId(11);
  auto lease = holder.TryClaim(id);
  ASSERT_TRUE(lease && lease->lease);
  auto seen = waiter_tier.TryClaim(id);
  ASSERT_TRUE(seen && seen->held);

  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<SharedTier::Claim>> ended;
  LeaseWaiter waiter(waiter_tier);
  waiter.Wait(id, nullptr, [&](Result<SharedTier::Claim> claim) {
    std::lock_guard lock(mu);
    ended = std::move(claim);
    cv.notify_all();
  });
  ASSERT_TRUE(holder.Publish(FleetEntry(id, PlanKind::kHeuristic, 1000, 1)));
  lease->lease.reset();
  waiter.Nudge(TestId(12));  // another entry's event: this wait stays
  {
    std::unique_lock lock(mu);
    EXPECT_FALSE(cv.wait_for(lock, 300ms, [&] { return ended.has_value(); }));
  }
  waiter.Nudge(id);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return ended.has_value(); })) << "the nudge did not end the wait";
  ASSERT_TRUE(*ended);
  EXPECT_TRUE((*ended)->entry);
  EXPECT_TRUE((*ended)->waited);
}

}  // namespace
}  // namespace kiln::cache::shared
