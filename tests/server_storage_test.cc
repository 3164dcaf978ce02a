// `kiln serve` on a full disk and on a read-only store. A full disk is
// simulated by the quota VFS (cache/testing/quota_vfs.h), which refuses to
// grow the files of the database's directory past a quota as ENOSPC would;
// a read-only store is opened through a "mode=ro" URI, which holds even
// for root (CI may run as root, where file permissions do not stop writes).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "cache/migrations.h"
#include "cache/sqlite_connection.h"
#include "cache/testing/quota_vfs.h"
#include "tests/serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using cache::testing::DirectoryBytes;
using cache::testing::SetQuotaBytes;
using nlohmann::json;
using testing::ServerEnv;

using testing::kText;

// Empties the write-ahead log (so every write must grow a file), then makes
// the disk of `dir` exactly full.
void FillDisk(const std::filesystem::path& dir) {
  auto db = cache::Connection::Open((dir / "kiln.db").string(), {});
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE((*db)->Execute("PRAGMA wal_checkpoint(TRUNCATE)"));
  SetQuotaBytes(DirectoryBytes(dir.string()));
}

class ServerDiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache::testing::RegisterQuotaVfs();
    SetQuotaBytes(0);
  }
  void TearDown() override { SetQuotaBytes(0); }
};

TEST_F(ServerDiskFullTest, CompilesAreAnsweredUncachedAndDeletesStillWork) {
  ServerEnv env({}, ServerEnv::DefaultHttpOptions(), "vfs=kiln-quota");
  ASSERT_TRUE(env.ok());
  auto first = env.Call("POST", "/v1/compile", testing::kAddModule, kText);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(ServerEnv::Json(first)["stored"], true);
  EXPECT_EQ(first.headers.Get("X-Kiln-Stored"), "true");
  const std::string stored_key = ServerEnv::Json(first)["key"];
  FillDisk(env.dir());

  // The compile is answered, with the executable, saying it was not stored.
  auto full = env.Call("POST", "/v1/compile", testing::NegateModule(4), kText);
  ASSERT_EQ(full.status, 200) << full.body;
  json answer = ServerEnv::Json(full);
  EXPECT_EQ(answer["cache"], "miss");
  EXPECT_EQ(answer["stored"], false);
  EXPECT_EQ(answer["not_stored"]["code"], "insufficient_storage");
  EXPECT_NE(answer["not_stored"]["message"].get<std::string>().find("is full"), std::string::npos);
  EXPECT_GT(answer["executable_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(full.headers.Get("X-Kiln-Stored"), "false");
  auto bytes = env.Call("POST", "/v1/compile?return=executable", testing::NegateModule(6), kText);
  ASSERT_EQ(bytes.status, 200);
  EXPECT_FALSE(bytes.body.empty()) << "the executable itself is still returned";
  EXPECT_EQ(bytes.headers.Get("X-Kiln-Store-Error"), "insufficient_storage");
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + answer["key"].get<std::string>()).status, 404);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/healthz"))["store"], "full");
  EXPECT_NE(env.Call("GET", "/metrics").body.find("kiln_cache_not_stored_total{problem=\"full\"} 2\n"),
            std::string::npos);
  // What is stored is still served.
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + stored_key).status, 200);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["entries"], 1);

  // A delete works on the full disk (it takes the store's space reserve).
  EXPECT_EQ(env.Call("DELETE", "/v1/executables/" + stored_key).status, 204);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + stored_key).status, 404);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["entries"], 0);

  // Room again: compiles are stored again, without a restart.
  SetQuotaBytes(0);
  auto stored = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::NegateModule(4), kText));
  EXPECT_EQ(stored["stored"], true);
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + stored["key"].get<std::string>()).status, 200);
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/healthz"))["store"], "ok");
}

TEST_F(ServerDiskFullTest, AServerStartedOnAFullDiskServesAndSaysSo) {
  ServerEnv env({}, ServerEnv::DefaultHttpOptions(), "vfs=kiln-quota");
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  // Another server starts on the same file once the disk is full (without
  // room even for its delete reserve).
  std::filesystem::remove(env.dir() / "kiln.db-reserve");
  FillDisk(env.dir());
  ApiOptions options;
  options.db_path = cache::testing::QuotaVfsUri((env.dir() / "kiln.db").string());
  options.pool_spec = "v5e:1";
  auto second = KilnApi::Create(options);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE((*second)->StoreWarning().find("delete reserve"), std::string::npos) << (*second)->StoreWarning();
  // A brand-new store on a full disk cannot even be created: a clear error.
  options.db_path = cache::testing::QuotaVfsUri((env.dir() / "new.db").string());
  auto fresh = KilnApi::Create(options);
  ASSERT_FALSE(fresh);
  EXPECT_NE(fresh.error().message.find("full"), std::string::npos) << fresh.error().message;
  EXPECT_EQ(env.Call("GET", "/v1/executables/" + key).status, 200);
}

class TempDirectory {
 public:
  TempDirectory() {
    char pattern[] = "/tmp/kiln-storage-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(ServerReadOnlyStoreTest, KilnServeOnAReadOnlyStoreServesHitsAndCompilesUncached) {
  TempDirectory dir;
  const std::string db = (dir.path() / "kiln.db").string();
  std::string key;
  {
    std::filesystem::create_directory(dir.path() / "writable");  // its output files
    testing::ServeProcess writable(dir.path() / "writable", "--db '" + db + "' --listen 127.0.0.1:0 --pool v5e:1");
    ASSERT_NE(writable.WaitUntilServing(), 0) << writable.Stderr();
    key = ServerEnv::Json(writable.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  }
  std::filesystem::create_directory(dir.path() / "read-only");
  testing::ServeProcess read_only(dir.path() / "read-only", "--db 'file:" + db + "?mode=ro' --listen 127.0.0.1:0 --pool v5e:1");
  ASSERT_NE(read_only.WaitUntilServing(), 0) << read_only.Stderr();
  EXPECT_NE(read_only.Stderr().find("warning: the cache database"), std::string::npos) << read_only.Stderr();
  EXPECT_EQ(read_only.Call("GET", "/v1/executables/" + key).status, 200);
  EXPECT_EQ(ServerEnv::Json(read_only.Call("POST", "/v1/compile", testing::kAddModule, kText))["cache"], "hit");
  auto uncached = ServerEnv::Json(read_only.Call("POST", "/v1/compile", testing::NegateModule(4), kText));
  EXPECT_EQ(uncached["cache"], "miss");
  EXPECT_EQ(uncached["stored"], false);
  EXPECT_EQ(uncached["not_stored"]["code"], "read_only_store");
  auto refused = read_only.Call("DELETE", "/v1/executables/" + key);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(ServerEnv::Json(refused)["error"]["code"], "read_only_store");
  EXPECT_EQ(ServerEnv::Json(read_only.Call("GET", "/healthz"))["store"], "read-only");
  EXPECT_EQ(read_only.Call("GET", "/v1/executables/" + key).status, 200) << "still there";
}

TEST(ServerReadOnlyStoreTest, KilnServeExitsClearlyOnAReadOnlyStoreItCannotMigrate) {
  TempDirectory dir;
  const std::string db = (dir.path() / "kiln.db").string();
  {
    auto connection = cache::Connection::Open(db, {});
    ASSERT_TRUE(connection);
    ASSERT_TRUE(cache::Migrate(**connection, cache::EmbeddedMigrations(), /*target_version=*/3));
  }
  testing::CommandResult run = testing::RunCommand("timeout 60 " + std::string(KILN_BINARY) + " serve --db 'file:" +
                                                   db + "?mode=ro' --listen 127.0.0.1:0 --pool v5e:1 2>&1");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("is read-only and at schema version 3"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace kiln::api
