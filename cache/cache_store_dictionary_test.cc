// Dictionary training: kept only when it pays; old and new entries decode.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::RandomBytes;
using testing::TempDir;
using testing::TestId;
using testing::TestPut;

// Small executables sharing most of their structure: what a dictionary is
// for (each is too small to learn its own repetitions).
std::string SimilarExecutable(uint64_t n) {
  std::string bytes;
  for (int section = 0; section < 12; ++section) {
    bytes += "section." + std::to_string(section) + ".kernel_fusion_dot_general_tile_128x128;";
    bytes += "vmem_offset=" + std::to_string((n * 131 + section * 17) % 4096) + ";";
  }
  return bytes;
}

CacheStoreOptions Options(const TempDir& dir) {
  CacheStoreOptions options;
  options.path = dir.File("cache.db");
  return options;
}

TEST(CacheStoreDictionaryTest, KeepsADictionaryThatPaysAndDecodesOldAndNewEntries) {
  TempDir dir;
  {
    auto store = CacheStore::Open(Options(dir));
    ASSERT_TRUE(store);
    for (uint64_t i = 0; i < 200; ++i) ASSERT_TRUE((*store)->Put(TestPut(TestId(i), SimilarExecutable(i))));
    auto report = (*store)->TrainDictionary();
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->kept) << report->reason;
    EXPECT_LT(report->holdout_bytes_with, report->holdout_bytes_without);
    ASSERT_NE(report->dictionary_id, 0u);
    EXPECT_EQ((*store)->Stats()->dictionary_id, report->dictionary_id);
    ASSERT_TRUE((*store)->Put(TestPut(TestId(1000), SimilarExecutable(1000))));
    auto metadata = (*store)->GetMetadata(TestId(1000));
    ASSERT_TRUE(metadata && metadata->has_value());
    EXPECT_EQ((*metadata)->dictionary_id, report->dictionary_id);
  }
  auto store = CacheStore::Open(Options(dir));
  ASSERT_TRUE(store);
  for (uint64_t i : {uint64_t{0}, uint64_t{199}, uint64_t{1000}}) {
    auto hit = (*store)->Get(TestId(i));
    ASSERT_TRUE(hit && hit->has_value()) << i;
    EXPECT_EQ((*hit)->entry->executable, SimilarExecutable(i));
  }
  auto report = (*store)->VerifyAll();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->ok, 201);
}

TEST(CacheStoreDictionaryTest, RejectsADictionaryThatDoesNotPay) {
  TempDir dir;
  auto store = CacheStore::Open(Options(dir));
  ASSERT_TRUE(store);
  for (uint64_t i = 0; i < 60; ++i) ASSERT_TRUE((*store)->Put(TestPut(TestId(i), RandomBytes(i, 4000))));
  auto report = (*store)->TrainDictionary();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(report->kept);
  EXPECT_FALSE(report->reason.empty());
  EXPECT_EQ((*store)->Stats()->dictionary_id, 0u);
}

TEST(CacheStoreDictionaryTest, TrainsAutomaticallyAfterEnoughPuts) {
  TempDir dir;
  CacheStoreOptions options = Options(dir);
  options.dictionary_training_puts = 100;
  auto store = CacheStore::Open(options);
  ASSERT_TRUE(store);
  for (uint64_t i = 0; i < 99; ++i) ASSERT_TRUE((*store)->Put(TestPut(TestId(i), SimilarExecutable(i))));
  EXPECT_EQ((*store)->Stats()->dictionary_id, 0u);
  ASSERT_TRUE((*store)->Put(TestPut(TestId(99), SimilarExecutable(99))));
  EXPECT_NE((*store)->Stats()->dictionary_id, 0u);
}

TEST(CacheStoreDictionaryTest, TooFewSamples) {
  TempDir dir;
  auto store = CacheStore::Open(Options(dir));
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->Put(TestPut(TestId(1), SimilarExecutable(1))));
  auto report = (*store)->TrainDictionary();
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->kept);
  EXPECT_NE(report->reason.find("too few"), std::string::npos);
}

}  // namespace
}  // namespace kiln::cache
