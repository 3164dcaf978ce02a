// The compile log: one row per (tenant, module name, chip, key), counted
// again on a recompile of the same key, bounded, filtered by name size.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TempDir;

CompileRecord Record(const std::string& tenant, const std::string& name, uint64_t key, int64_t dim,
                     int64_t at_ms) {
  return CompileRecord{.tenant = tenant,
                       .module_name = name,
                       .chip = "v5e",
                       .key = Hash128{0, key},
                       .client = "job/host" + std::to_string(key),
                       .parameters = {"f32[" + std::to_string(dim) + ",128]", "f32[]"},
                       .compile_seconds = 1.5,
                       .last_ms = at_ms};
}

class CompileLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CacheStoreOptions options;
    options.path = dir_.File("cache.db");
    options.compile_log_rows = 5;
    auto opened = CacheStore::Open(options);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }
  TempDir dir_;
  std::unique_ptr<CacheStore> store_;
};

TEST_F(CompileLogTest, CountsOtherKeysOfTheNameAndAddsUpRepeats) {
  EXPECT_EQ(*store_->compile_log().Record(Record("alice", "step", 1, 16, 1000)), 0);
  EXPECT_EQ(*store_->compile_log().Record(Record("alice", "step", 2, 17, 2000)), 1);
  EXPECT_EQ(*store_->compile_log().Record(Record("alice", "step", 2, 17, 3000)), 1);  // the same key again
  EXPECT_EQ(*store_->compile_log().Record(Record("alice", "other", 3, 8, 4000)), 0);
  EXPECT_EQ(*store_->compile_log().Record(Record("bob", "step", 4, 32, 5000)), 0);  // another tenant

  auto records = store_->compile_log().Records({.tenant = "alice", .min_keys = 2});
  ASSERT_TRUE(records) << records.error().ToString();
  ASSERT_EQ(records->size(), 2u);  // "other" has one key
  EXPECT_EQ((*records)[0].key, (Hash128{0, 1}));
  EXPECT_EQ((*records)[0].parameters, (std::vector<std::string>{"f32[16,128]", "f32[]"}));
  EXPECT_EQ((*records)[1].key, (Hash128{0, 2}));
  EXPECT_EQ((*records)[1].compiles, 2);
  EXPECT_DOUBLE_EQ((*records)[1].compile_seconds, 3.0);
  EXPECT_EQ((*records)[1].first_ms, 2000);
  EXPECT_EQ((*records)[1].last_ms, 3000);
  EXPECT_EQ((*records)[1].client, "job/host2");

  auto everyone = store_->compile_log().Records({.min_keys = 1});
  ASSERT_TRUE(everyone);
  EXPECT_EQ(everyone->size(), 4u);
  auto by_name = store_->compile_log().Records({.module_name = "step", .min_keys = 1});
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->size(), 3u);  // alice's two and bob's one
}

TEST_F(CompileLogTest, KeepsOnlyTheNewestRows) {
  for (uint64_t key = 1; key <= 8; ++key) ASSERT_TRUE(store_->compile_log().Record(Record("alice", "step", key, 8, key)));
  auto records = store_->compile_log().Records({.min_keys = 1});
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 5u);
  EXPECT_EQ(records->front().key, (Hash128{0, 4}));
  EXPECT_EQ(records->back().key, (Hash128{0, 8}));
}

TEST_F(CompileLogTest, RefusesRecordsWithoutANameOrWithANewlineInAShape) {
  CompileRecord nameless = Record("alice", "", 1, 8, 1);
  EXPECT_FALSE(store_->compile_log().Record(nameless));
  CompileRecord bad_shape = Record("alice", "step", 1, 8, 1);
  bad_shape.parameters.push_back("f32[2]\nf32[3]");
  EXPECT_FALSE(store_->compile_log().Record(bad_shape));
  EXPECT_TRUE(store_->compile_log().Records({.min_keys = 1})->empty());
}

}  // namespace
}  // namespace kiln::cache
