// Explaining a miss: the nearest stored entry and the differing components.
#include <gtest/gtest.h>

#include "cache/cache_store.h"
#include "cache/components.h"
#include "cache/sqlite_connection.h"
#include "cache/testing/test_store.h"
#include "compiler/hlo/parser.h"

namespace kiln::cache {
namespace {

using testing::TempDir;
using testing::TestExecutable;
using testing::TestId;
using testing::TestPut;

// Components as a fingerprint lists them; `target` stands for the chip.
std::vector<KeyComponent> Components(uint64_t p0, uint64_t p1, uint64_t body, uint64_t target = 2) {
  return {{"parameter 0", {0, p0}}, {"parameter 1", {0, p1}}, {"entry body", {0, body}},
          {"module config", {0, 7}}, {"options", {0, 1}},     {"target", {0, target}}};
}

// The nearest entry alone (NearestEntries' first), or none.
Result<std::optional<Explanation>> Nearest(CacheStore& store, const std::string& tenant, const std::string& chip,
                                           uint32_t format_version, const std::vector<KeyComponent>& components) {
  KILN_ASSIGN_OR_RETURN(std::vector<Explanation> nearest,
                        store.NearestEntries(tenant, chip, format_version, components, 1));
  if (nearest.empty()) return std::nullopt;
  return std::move(nearest.front());
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
  other_chip.components = Components(10, 22, 31, /*target=*/4);
  PutRequest other_tenant = TestPut(TestId(4, "bob"), executable);
  other_tenant.components = Components(10, 22, 30);
  PutRequest shared = TestPut(TestId(5, "shared"), executable);
  shared.components = Components(10, 22, 30);
  for (const PutRequest* put : {&near, &far, &other_chip, &other_tenant, &shared}) ASSERT_TRUE((*store)->Put(*put));

  // The missed key differs from entry 1 only in parameter 1. The v4 entry
  // shares as many module components; the asked chip breaks the tie.
  auto explained = Nearest(**store, "alice", "v5e", kCompilerFormatVersion, Components(10, 22, 30));
  ASSERT_TRUE(explained) << explained.error().message;
  ASSERT_TRUE(explained->has_value());
  EXPECT_EQ((*explained)->nearest.id, TestId(1));
  EXPECT_EQ((*explained)->shared_components, 5);
  EXPECT_EQ((*explained)->differing, std::vector<std::string>{"parameter 1"});

  // More module components shared win over the chip: the module is cached
  // for v4 only, and the target is all that differs.
  auto on_v6e = Nearest(**store, "alice", "v6e", kCompilerFormatVersion, Components(10, 22, 31, /*target=*/6));
  ASSERT_TRUE(on_v6e && on_v6e->has_value());
  EXPECT_EQ((*on_v6e)->nearest.id, TestId(3, "alice", "v4"));
  EXPECT_EQ((*on_v6e)->differing, std::vector<std::string>{"target"});

  // A different number of parameters shows up as well.
  auto fewer = Nearest(**store, "alice", "v5e", kCompilerFormatVersion,
                       {{"parameter 0", {0, 10}}, {"entry body", {0, 30}}});
  ASSERT_TRUE(fewer && fewer->has_value());
  EXPECT_EQ((*fewer)->nearest.id, TestId(1));
  EXPECT_EQ((*fewer)->differing,
            (std::vector<std::string>{"parameter 1", "module config", "options", "target"}));

  // Options, target and module config are shared by nearly every entry:
  // sharing only them is sharing nothing.
  EXPECT_FALSE(Nearest(**store, "alice", "v5e", kCompilerFormatVersion, Components(99, 98, 97))->has_value());
  // Nothing in common, or other format version: nothing to explain with.
  EXPECT_FALSE(Nearest(**store, "alice", "v5e", kCompilerFormatVersion, {{"entry body", {9, 9}}})->has_value());
  EXPECT_FALSE(Nearest(**store, "alice", "v5e", kCompilerFormatVersion + 1, Components(10, 20, 30))->has_value());
  EXPECT_FALSE(Nearest(**store, "carol", "v6e", kCompilerFormatVersion, Components(10, 20, 30))->has_value());
  // Only the caller's own namespace is searched: not bob's, not the shared one.
  EXPECT_FALSE(Nearest(**store, "carol", "v5e", kCompilerFormatVersion, Components(10, 22, 30))->has_value());
  auto in_shared = Nearest(**store, "shared", "v5e", kCompilerFormatVersion, Components(10, 22, 30));
  ASSERT_TRUE(in_shared && in_shared->has_value());
  EXPECT_EQ((*in_shared)->nearest.id, TestId(5, "shared"));
}

TEST(ExplainTest, SourceTextIsKeptBesideTheEntryAndGoesWithIt) {
  TempDir dir;
  CacheStoreOptions options;
  options.path = dir.File("cache.db");
  auto store = CacheStore::Open(options);
  ASSERT_TRUE(store);
  const std::string executable = TestExecutable(1);
  const std::string text = "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n";
  PutRequest with_text = TestPut(TestId(1), executable);
  with_text.source_text = text;
  ASSERT_TRUE((*store)->Put(with_text));
  auto source = (*store)->Source(TestId(1));
  ASSERT_TRUE(source) << source.error().message;
  ASSERT_TRUE(source->has_value());
  EXPECT_EQ(**source, text);
  // A put without text (a tuned swap) keeps the text the entry had.
  ASSERT_TRUE((*store)->Put(TestPut(TestId(1), executable)));
  EXPECT_EQ(**(*store)->Source(TestId(1)), text);
  // An entry without text, and a missing entry, have none.
  ASSERT_TRUE((*store)->Put(TestPut(TestId(2), executable)));
  EXPECT_FALSE((*store)->Source(TestId(2))->has_value());
  // Evicting the entry removes its text.
  ASSERT_TRUE(*(*store)->Evict(TestId(1)));
  EXPECT_FALSE((*store)->Source(TestId(1))->has_value());
  auto db = Connection::Open(dir.File("cache.db"), {.read_only = true});
  ASSERT_TRUE(db);
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM entry_sources"), 0);  // entry 2 has none; entry 1's went with it

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
