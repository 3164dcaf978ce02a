#include "compiler/spmd/entry_shardings.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::spmd {
namespace {

using hlo::Literal;

// An s32 vector holding `values`.
Literal S32(std::vector<int32_t> values) {
  Literal lit(hlo::Shape(hlo::PrimitiveType::kS32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<int32_t>(static_cast<int64_t>(i), values[i]);
  return lit;
}

TEST(EntryShardingsTest, SplitsModuleArgumentsByParameterSharding) {
  auto module = hlo::ParseModule(R"(
HloModule m, num_partitions=2
ENTRY e {
  a = s32[4] parameter(0), sharding={devices=[2]<=[2]}
  b = s32[4] parameter(1)
  ROOT add = s32[4] add(a, b), sharding={devices=[2]1,0}
})");
  ASSERT_TRUE(module.has_value()) << module.error();
  std::vector<Literal> args = {S32({0, 1, 2, 3}), S32({0, 1, 2, 3})};
  auto split = SplitArguments(**module, args, 2);
  ASSERT_TRUE(split.has_value()) << split.error();
  EXPECT_EQ((*split)[1][0], S32({2, 3}));
  EXPECT_EQ((*split)[1][1], S32({0, 1, 2, 3}));
  auto root = EntryRootSharding(**module, 2);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->devices(), (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace kiln::spmd
