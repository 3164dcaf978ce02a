// Crash safety: a child process writing entries (each put, then swapped for
// a tuned executable) is killed with SIGKILL at random moments; after each
// kill the database opens, passes PRAGMA integrity_check, every
// acknowledged entry is present, tuned, and verifies, and the running entry
// totals equal a recount.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "cache/cache_store.h"
#include "cache/testing/crash_entries.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::CrashEntryTunedBytes;
using testing::CrashEntryId;
using testing::TempDir;

constexpr int kKills = 24;

// The indices whose Put had returned: complete lines of the ack file (a
// kill may leave the last line unfinished).
std::vector<uint64_t> ReadAcknowledged(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint64_t> acked;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    acked.push_back(std::stoull(text.substr(start, end - start)));
    start = end + 1;
  }
  return acked;
}

pid_t SpawnWriter(const std::string& db, const std::string& ack, uint64_t start) {
  const std::string start_text = std::to_string(start);
  pid_t pid = fork();
  if (pid == 0) {
    execl(KILN_CACHE_CRASH_WRITER, KILN_CACHE_CRASH_WRITER, db.c_str(), ack.c_str(), start_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(CrashRecoveryTest, SurvivesSigkillDuringWrites) {
  TempDir dir;
  const std::string db = dir.File("cache.db");
  const std::string ack = dir.File("acked.txt");
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(20, 250);
  const auto started = std::chrono::steady_clock::now();
  uint64_t next = 0;
  size_t max_acked = 0;
  for (int kill_index = 0; kill_index < kKills; ++kill_index) {
    SCOPED_TRACE("kill " + std::to_string(kill_index));
    pid_t pid = SpawnWriter(db, ack, next);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "writer exited on its own with status " << status << " (an error in the child)";

    {
      auto raw = Connection::Open(db, {});
      ASSERT_TRUE(raw) << raw.error().message;
      auto check = (*raw)->Prepare("PRAGMA integrity_check");
      ASSERT_TRUE(check);
      ASSERT_TRUE(*check->Step());
      EXPECT_EQ(check->ColumnText(0), "ok");
    }
    CacheStoreOptions options;
    options.path = db;
    auto store = CacheStore::Open(options);
    ASSERT_TRUE(store) << store.error().message;
    const std::vector<uint64_t> acked = ReadAcknowledged(ack);
    for (uint64_t i : acked) {
      auto hit = (*store)->Get(CrashEntryId(i));
      ASSERT_TRUE(hit) << hit.error().message;
      ASSERT_TRUE(hit->has_value()) << "acknowledged entry " << i << " is missing";
      ASSERT_EQ((*hit)->entry->executable, CrashEntryTunedBytes(i)) << "entry " << i;
      ASSERT_EQ((*hit)->entry->metadata.plan_kind, PlanKind::kTuned) << "entry " << i;
    }
    {
      auto running = (*store)->Totals();
      ASSERT_TRUE(running) << running.error().message;
      auto raw = Connection::Open(db, {});
      ASSERT_TRUE(raw) << raw.error().message;
      auto recount = TotalsReader::Recount(**raw);
      ASSERT_TRUE(recount) << recount.error().message;
      EXPECT_EQ((*running)->all, recount->all);
      EXPECT_EQ((*running)->by_tenant, recount->by_tenant);
    }
    auto report = (*store)->VerifyAll();
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(report->ok, report->checked);
    EXPECT_GE(report->checked, static_cast<int64_t>(acked.size()));
    max_acked = acked.size();
    // Continue after everything the child may have written.
    next = acked.empty() ? next + 1000 : acked.back() + 1000;
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_GT(max_acked, static_cast<size_t>(kKills)) << "the writer barely wrote; kills hit only startup";
  std::cout << "crash test: " << kKills << " kills, " << max_acked << " acknowledged entries, "
            << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms\n";
}

}  // namespace
}  // namespace kiln::cache
