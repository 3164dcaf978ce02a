#include "compiler/hlo/sharded_literal.h"

#include <gtest/gtest.h>


namespace kiln::hlo {
namespace {

Literal Iota(std::vector<int64_t> dims) {
  Literal lit(Shape(PrimitiveType::kS32, std::move(dims)));
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.Set<int32_t>(i, static_cast<int32_t>(i));
  return lit;
}

std::vector<int32_t> Values(const Literal& lit) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.Get<int32_t>(i));
  return out;
}

HloSharding Sharding(std::string_view text) { return ParseSharding(text).value_or(HloSharding::Unknown()); }

TEST(ShardedLiteralTest, SplitsByTileAndAssemblesBack) {
  // [[0..3],[4..7],[8..11],[12..15]] over [[0,2],[1,3]]: device 2 holds rows
  // 0-1, columns 2-3.
  Literal global = Iota({4, 4});
  HloSharding s = Sharding("{devices=[2,2]<=[2,2]T(1,0)}");
  auto shards = SplitLiteral(global, s, 4);
  ASSERT_TRUE(shards.has_value()) << shards.error();
  EXPECT_EQ(Values((*shards)[2]), (std::vector<int32_t>{2, 3, 6, 7}));
  EXPECT_EQ(Values((*shards)[1]), (std::vector<int32_t>{8, 9, 12, 13}));
  auto back = AssembleLiteral(*shards, global.shape(), s);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, global);
}

TEST(ShardedLiteralTest, PadsUnevenShardsWithZeros) {
  Literal global = Iota({5});
  HloSharding s = Sharding("{devices=[2]<=[2]}");
  auto shards = SplitLiteral(global, s, 2);
  ASSERT_TRUE(shards.has_value()) << shards.error();
  EXPECT_EQ(Values((*shards)[0]), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(Values((*shards)[1]), (std::vector<int32_t>{3, 4, 0}));
  // Padding is ignored when assembling.
  (*shards)[1].Set<int32_t>(2, 99);
  auto back = AssembleLiteral(*shards, global.shape(), s);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, global);
}

TEST(ShardedLiteralTest, ReplicasMustAgree) {
  Literal global = Iota({4});
  HloSharding s = Sharding("{devices=[2,2]<=[4] last_tile_dim_replicate}");
  auto shards = SplitLiteral(global, s, 4);
  ASSERT_TRUE(shards.has_value()) << shards.error();
  EXPECT_EQ((*shards)[0], (*shards)[1]);
  EXPECT_TRUE(AssembleLiteral(*shards, global.shape(), s).has_value());
  (*shards)[1].Set<int32_t>(0, 7);
  auto bad = AssembleLiteral(*shards, global.shape(), s);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("partition 1 disagrees"), std::string::npos) << bad.error().message;
  // A replicated result must be the same everywhere too.
  std::vector<Literal> copies = {global, global};
  copies[1].Set<int32_t>(3, 0);
  EXPECT_FALSE(AssembleLiteral(copies, global.shape(), HloSharding::Replicate()).has_value());
}

TEST(ShardedLiteralTest, MaximalTakesTheOwningPartition) {
  Literal global = Iota({3});
  std::vector<Literal> shards = {Iota({3}), global};
  shards[0].Set<int32_t>(0, 42);
  auto back = AssembleLiteral(shards, global.shape(), HloSharding::Maximal(1));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, global);
}

TEST(ShardedLiteralTest, TuplesGoLeafByLeaf) {
  Literal global = Literal::Tuple({Iota({4}), Iota({2, 2})});
  HloSharding s = Sharding("{{devices=[2]<=[2]}, {replicated}}");
  auto shards = SplitLiteral(global, s, 2);
  ASSERT_TRUE(shards.has_value()) << shards.error();
  EXPECT_EQ(Values((*shards)[1].tuple_elements()[0]), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ((*shards)[1].tuple_elements()[1], Iota({2, 2}));
  auto back = AssembleLiteral(*shards, global.shape(), s);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, global);
}

TEST(ShardedLiteralTest, RejectsShardsOfTheWrongShape) {
  std::vector<Literal> shards = {Iota({3}), Iota({2})};
  auto bad = AssembleLiteral(shards, Shape(PrimitiveType::kS32, {4}), Sharding("{devices=[2]<=[2]}"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("partition 0 holds s32[3]"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace kiln::hlo
