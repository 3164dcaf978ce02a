// Explaining a miss: the nearest stored entry and the differing components.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/components.h"
#include "cache/testing/test_store.h"
#include "compiler/hlo/parser.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

std::vector<KeyComponent> Components(uint64_t p0, uint64_t p1, uint64_t body) {
  return {{"parameter 0", {0, p0}}, {"parameter 1", {0, p1}}, {"entry body", {0, body}},
          {"options", {0, 1}},     {"target", {0, 2}}};
}

TEST(ExplainTest, FindsNearestEntryAndNamesTheDifference) {
  TempDir dir;
  CacheStoreOptions options;
  options.path = dir.File("cache.db");
  auto store = CacheStore::Open(options);
  ASSERT_TRUE(store);
  const std::string executable = TestExecutable(1);
  PutRequest near = TestPut(TestId(1), executable);
  near.components = Components(10, 20, 30);
  PutRequest far = TestPut(TestId(2), executable);
  far.components = Components(11, 21, 31);
  PutRequest other_chip = TestPut(TestId(3, "alice", "v4"), executable);
  other_chip.components = Components(10, 22, 30);
  PutRequest other_tenant = TestPut(TestId(4, "bob"), executable);
  other_tenant.components = Components(10, 22, 30);
  PutRequest shared = TestPut(TestId(5, "shared"), executable);
  shared.components = Components(10, 22, 30);
  for (const PutRequest* put : {&near, &far, &other_chip, &other_tenant, &shared}) ASSERT_TRUE((*store)->Put(*put));

  // The missed key differs from entry 1 only in parameter 1.
  auto explained = (*store)->Explain("alice", "v5e", 1, Components(10, 22, 30));
  ASSERT_TRUE(explained) << explained.error().message;
  ASSERT_TRUE(explained->has_value());
  EXPECT_EQ((*explained)->nearest.id, TestId(1));
  EXPECT_EQ((*explained)->shared_components, 4);
  EXPECT_EQ((*explained)->differing, std::vector<std::string>{"parameter 1"});

  // A different number of parameters shows up as well.
  auto fewer = (*store)->Explain("alice", "v5e", 1, {{"parameter 0", {0, 10}}, {"entry body", {0, 30}}});
  ASSERT_TRUE(fewer && fewer->has_value());
  EXPECT_EQ((*fewer)->nearest.id, TestId(1));
  EXPECT_EQ((*fewer)->differing, (std::vector<std::string>{"parameter 1", "options", "target"}));

  // Nothing in common, or other format version: nothing to explain with.
  EXPECT_FALSE((*store)->Explain("alice", "v5e", 1, {{"entry body", {9, 9}}})->has_value());
  EXPECT_FALSE((*store)->Explain("alice", "v5e", 2, Components(10, 20, 30))->has_value());
  EXPECT_FALSE((*store)->Explain("carol", "v6e", 1, Components(10, 20, 30))->has_value());
  // Only the caller's own namespace is searched: not bob's, not the shared one.
  EXPECT_FALSE((*store)->Explain("carol", "v5e", 1, Components(10, 22, 30))->has_value());
  auto in_shared = (*store)->Explain("shared", "v5e", 1, Components(10, 22, 30));
  ASSERT_TRUE(in_shared && in_shared->has_value());
  EXPECT_EQ((*in_shared)->nearest.id, TestId(5, "shared"));
}

TEST(ExplainTest, ComponentsOfRealFingerprints) {
  const char* kBase = R"(HloModule m
ENTRY e {
  a = f32[16,128] parameter(0)
  b = f32[16,128] parameter(1)
  ROOT s = f32[16,128] add(a, b)
})";
  const char* kChanged = R"(HloModule m
ENTRY e {
  a = f32[16,128] parameter(0)
  b = f32[17,128] parameter(1)
  ROOT s = f32[17,128] add(a, b)
})";
  auto base = hlo::ParseModule(kBase);
  auto changed = hlo::ParseModule(kChanged);
  ASSERT_TRUE(base) << base.error().message;
  ASSERT_TRUE(changed) << changed.error().message;
  auto base_fp = hlo::FingerprintModule(**base, {});
  auto changed_fp = hlo::FingerprintModule(**changed, {});
  ASSERT_TRUE(base_fp && changed_fp);
  auto base_components = KeyComponentsOf(*base_fp);
  ASSERT_GE(base_components.size(), 6u);
  EXPECT_EQ(base_components[0].name, "parameter 0");
  EXPECT_EQ(base_components[2].name, "entry body");
  auto differing = DifferingComponents(KeyComponentsOf(*changed_fp), base_components);
  ASSERT_FALSE(differing.empty());
  EXPECT_EQ(differing[0], "parameter 1");
  EXPECT_EQ(std::count(differing.begin(), differing.end(), "parameter 0"), 0);
}

}  // namespace
}  // namespace kiln::cache
