// `kiln inspect stats` and `kiln inspect list` end to end over a store
// filled through the CacheStore API: --json, --sort and --tenant.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"
#include "tests/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kiln::cache::testing::TestExecutable;
using kiln::cache::testing::TestId;
using kiln::cache::testing::TestPut;
using kiln::testing::RunKiln;
using kiln::testing::RunResult;

class KilnInspectFiguresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_inspect_figures_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "store.db").string();
    kiln::cache::CacheStoreOptions options;
    options.path = db_;
    options.dictionary_training_puts = 0;
    auto store = kiln::cache::CacheStore::Open(options);
    ASSERT_TRUE(store) << store.error().ToString();
    // alice 1: 2 s compile, 3 hits; alice 2: 10 s, 1 hit, the largest;
    // bob 3: 1 s, 5 hits.
    struct Fill {
      kiln::cache::EntryId id;
      size_t size;
      double seconds;
      int hits;
    };
    for (const Fill& f : {Fill{TestId(1), 4096, 2, 3}, Fill{TestId(2), 9000, 10, 1}, Fill{TestId(3, "bob"), 2048, 1, 5}}) {
      const std::string bytes = TestExecutable(f.id.key.high, f.size);
      ASSERT_TRUE((*store)->Put(TestPut(f.id, bytes, f.seconds)));
      for (int i = 0; i < f.hits; ++i) ASSERT_TRUE((*store)->Get(f.id));
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  json Json(const std::string& args) {
    RunResult r = RunKiln(args + " --db " + db_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }
  std::vector<std::string> Tenants(const json& list) {
    std::vector<std::string> tenants;
    for (const json& e : list) tenants.push_back(e["tenant"]);
    return tenants;
  }
  std::vector<double> Column(const json& list, const char* field) {
    std::vector<double> values;
    for (const json& e : list) values.push_back(e[field]);
    return values;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(KilnInspectFiguresTest, StatsJsonCountsHitsAndSavedSeconds) {
  const json all = Json("inspect stats --json");
  EXPECT_EQ(all["entries"], 3);
  EXPECT_EQ(all["hits"], 9);
  EXPECT_DOUBLE_EQ(all["compile_seconds_saved"].get<double>(), 3 * 2.0 + 10.0 + 5 * 1.0);
  EXPECT_EQ(all["raw_bytes"], 4096 + 9000 + 2048);
  const json alice = Json("inspect stats --json --tenant alice");
  EXPECT_EQ(alice["entries"], 2);
  EXPECT_EQ(alice["hits"], 4);
  EXPECT_EQ(alice["tenant"], "alice");
}

TEST_F(KilnInspectFiguresTest, StatsTableByDefault) {
  RunResult table = RunKiln("inspect stats --tenant bob --db " + db_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(json::parse(table.out, nullptr, false).is_discarded()) << table.out;
  EXPECT_NE(table.out.find("compile seconds saved  5.0"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("hits                   5"), std::string::npos) << table.out;
}

TEST_F(KilnInspectFiguresTest, ListSortsAndFiltersByTenant) {
  EXPECT_EQ(Column(Json("inspect list --json --sort hits"), "hits"), (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(Column(Json("inspect list --json --sort saved"), "compile_ms"),
            (std::vector<double>{10000, 2000, 1000}));
  const json by_bytes = Json("inspect list --json --sort bytes");
  ASSERT_EQ(by_bytes.size(), 3u);
  EXPECT_EQ(by_bytes[0]["raw_bytes"], 9000);
  EXPECT_EQ(Tenants(Json("inspect list --json --tenant bob")), (std::vector<std::string>{"bob"}));
  EXPECT_EQ(Tenants(Json("inspect list --json --tenant alice --sort age")),
            (std::vector<std::string>{"alice", "alice"}));
  RunResult bad = RunKiln("inspect list --sort colour --db " + db_);
  EXPECT_NE(bad.exit_code, 0);
}

}  // namespace
