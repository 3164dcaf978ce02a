// Tests of the parser's shape memo (text_extent.h, text_memo.h): which
// spans the byte scan delimits, and that modules parse the same whether a
// shape is read through tokens or from the memo.
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/parser_test_util.h"
#include "compiler/hlo/text_extent.h"
#include "compiler/hlo/text_memo.h"

namespace kiln::hlo::parser_testing {
namespace {

std::optional<std::string> Extent(std::string_view text) {
  std::optional<size_t> end = ScanShapeExtent(text, 0);
  if (!end) return std::nullopt;
  return std::string(text.substr(0, *end));
}

TEST(ScanShapeExtentTest, DelimitsArraysLayoutsAndTuples) {
  EXPECT_EQ(Extent("f32[2,3]{1,0} add(%a, %b)"), "f32[2,3]{1,0}");
  EXPECT_EQ(Extent("bf16[8,128]{1,0:T(8,128)(2,1)} copy(%p)"), "bf16[8,128]{1,0:T(8,128)(2,1)}");
  EXPECT_EQ(Extent("s32[] constant(1)"), "s32[]");
  EXPECT_EQ(Extent("f32[<=4,?]{1,0} parameter(0)"), "f32[<=4,?]{1,0}");
  EXPECT_EQ(Extent("(f32[2]{0}, (s32[], u8[3])) tuple(%a, %b)"), "(f32[2]{0}, (s32[], u8[3]))");
  EXPECT_EQ(Extent("f32[2]{ 0 } negate(%x)"), "f32[2]{ 0 }");
  // A computation's result shape before the '{' opening its body.
  EXPECT_EQ(Extent("f32[] {\n  %p = f32[] parameter(0)"), "f32[]");
  EXPECT_EQ(Extent("s32[4] {\n  ROOT %c = s32[4] constant({1,2,3,4})"), "s32[4]");
  EXPECT_EQ(Extent("f32[2] { }"), "f32[2]");
}

TEST(ScanShapeExtentTest, RefusesTextWhoseReadingDependsOnWhatFollows) {
  EXPECT_EQ(Extent("f32[2] {0} negate(%x)"), std::nullopt);   // layout after a space
  EXPECT_EQ(Extent("f32[2] {\n 0 } negate(%x)"), std::nullopt);
  EXPECT_EQ(Extent("f32[2] {:T(2)} negate(%x)"), std::nullopt);
  EXPECT_EQ(Extent("f32[2] { -1 } negate(%x)"), std::nullopt);
  EXPECT_EQ(Extent("f32[2] {/* c */ %x"), std::nullopt);
  EXPECT_EQ(Extent("f32[2]/* c */{0} negate(%x)"), std::nullopt);
  EXPECT_EQ(Extent("f32[2]{} negate(%x)"), std::nullopt);     // not a layout
  EXPECT_EQ(Extent("b(f32[2]) parameter(0)"), std::nullopt);  // buffer shape
  EXPECT_EQ(Extent("(f32[2],\n s32[]) tuple(%a, %b)"), std::nullopt);
  EXPECT_EQ(Extent("f32[2"), std::nullopt);
  EXPECT_EQ(Extent("f32[2]{1,0"), std::nullopt);
  EXPECT_EQ(Extent("(f32[2], s32[]"), std::nullopt);
  EXPECT_EQ(Extent("f32 [2]"), std::nullopt);
  EXPECT_EQ(Extent(""), std::nullopt);
}

TEST(TextMemoTest, FindsOnlyWhatWasInserted) {
  TextMemo<Shape> cache;
  std::string_view text = "f32[2]{0} f32[3]{0}";
  EXPECT_EQ(cache.Find(text.substr(0, 9)), nullptr);
  cache.Insert(text.substr(0, 9), ShapeOrDie("f32[2]{0}"));
  ASSERT_NE(cache.Find(text.substr(0, 9)), nullptr);
  EXPECT_EQ(*cache.Find(text.substr(0, 9)), ShapeOrDie("f32[2]"));
  EXPECT_EQ(cache.Find(text.substr(10, 9)), nullptr);
  // A second insert of the same text keeps the first shape.
  cache.Insert(text.substr(0, 9), ShapeOrDie("f32[7]"));
  EXPECT_EQ(*cache.Find(text.substr(0, 9)), ShapeOrDie("f32[2]"));
}

// Each shape text appears several times in different surroundings; the
// memo must give every instruction what a fresh parse would.
TEST(TextMemoTest, RepeatedShapesParseAsWrittenEachTime) {
  auto m = ModuleOrDie(R"(HloModule m
ENTRY %e (p: f32[2]) -> (f32[2], f32[2]) {
  %p = f32[2]{0:T(2)} parameter(0)
  %a = f32[2]{0:T(2)} negate(f32[2]{0:T(2)} %p)
  %b = f32[2] negate(f32[2] %a)
  %c = f32[2] {0:T(2)} negate(%b)
  %d = f32[2]{0:T(2)} negate(%c)
  ROOT %t = (f32[2], f32[2]) tuple(%a, %d)
})");
  const auto& instrs = m->entry()->instructions();
  ASSERT_EQ(instrs.size(), 6u);
  const Shape tiled = ShapeOrDie("f32[2]{0:T(2)}");
  const Shape plain = ShapeOrDie("f32[2]");
  EXPECT_EQ(instrs[0]->shape(), tiled);
  EXPECT_EQ(instrs[1]->shape(), tiled);
  EXPECT_EQ(instrs[2]->shape(), plain);
  EXPECT_EQ(instrs[3]->shape(), tiled);  // the layout after a space still counts
  EXPECT_EQ(instrs[4]->shape(), tiled);
  EXPECT_EQ(instrs[5]->shape(), ShapeOrDie("(f32[2], f32[2])"));
}

TEST(TextMemoTest, ABadShapeIsReportedWhereItIsWritten) {
  Result<std::unique_ptr<Module>> m = ParseModule(R"(HloModule m
ENTRY %e {
  %p = f32[2]{0} parameter(0)
  %q = f32[2]{1} negate(%p)
})", "bad.hlo");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().ToString().find("bad.hlo:4:"), std::string::npos) << m.error().ToString();
  EXPECT_NE(m.error().ToString().find("not a permutation"), std::string::npos) << m.error().ToString();
}

}  // namespace
}  // namespace kiln::hlo::parser_testing
