// Unit tests of shape parsing (ParseShape) and of printing shapes back.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/parser_test_util.h"

namespace kiln::hlo::parser_testing {
namespace {

TEST(ShapeParseTest, ArraysAndDefaultLayouts) {
  Shape s = ShapeOrDie("f32[2,3]");
  EXPECT_TRUE(s.IsArray());
  EXPECT_EQ(s.element_type(), PrimitiveType::kF32);
  EXPECT_EQ(s.dimensions(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(s.layout().minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(s.has_default_layout());
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  EXPECT_EQ(s.ToString(/*print_default_layout=*/true), "f32[2,3]{1,0}");
  EXPECT_EQ(ShapeOrDie("f32[2,3]{1,0}"), s);

  Shape t = ShapeOrDie("bf16[4,5,6]{0,2,1}");
  EXPECT_EQ(t.layout().minor_to_major, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_FALSE(t.has_default_layout());
  EXPECT_EQ(t.ToString(), "bf16[4,5,6]{0,2,1}");

  Shape scalar = ShapeOrDie("s32[]");
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.ToString(), "s32[]");
  EXPECT_EQ(ShapeOrDie("pred[]").element_type(), PrimitiveType::kPred);
  EXPECT_EQ(ShapeOrDie("u4[8]").element_type(), PrimitiveType::kU4);
  EXPECT_EQ(ShapeOrDie("f8e4m3fn[8]").element_type(), PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(ShapeOrDie("c128[1]").element_type(), PrimitiveType::kC128);
}

TEST(ShapeParseTest, TuplesTokensAndBuffers) {
  Shape s = ShapeOrDie("(f32[2], (s32[], token[]), ())");
  ASSERT_TRUE(s.IsTuple());
  ASSERT_EQ(s.tuple_shapes().size(), 3u);
  EXPECT_TRUE(s.tuple_shapes(1).IsTuple());
  EXPECT_TRUE(s.tuple_shapes(1).tuple_shapes(1).IsToken());
  EXPECT_TRUE(s.tuple_shapes(2).IsTuple());
  EXPECT_TRUE(s.tuple_shapes(2).tuple_shapes().empty());
  EXPECT_EQ(s.ToString(), "(f32[2], (s32[], token[]), ())");

  EXPECT_TRUE(ShapeOrDie("token[]").IsToken());
  EXPECT_EQ(ShapeOrDie("opaque[]").element_type(), PrimitiveType::kOpaque);

  Shape b = ShapeOrDie("b(f32[2]{0})");
  ASSERT_TRUE(b.IsBuffer());
  EXPECT_EQ(b.tuple_shapes(0), ShapeOrDie("f32[2]"));
  EXPECT_EQ(b.ToString(), "b(f32[2])");
}

TEST(ShapeParseTest, DynamicDimensions) {
  Shape s = ShapeOrDie("f32[<=4,?,3]");
  EXPECT_EQ(s.dimensions(), (std::vector<int64_t>{4, kUnboundedDim, 3}));
  EXPECT_TRUE(s.is_dynamic_dimension(0));
  EXPECT_TRUE(s.is_dynamic_dimension(1));
  EXPECT_FALSE(s.is_dynamic_dimension(2));
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.ToString(), "f32[<=4,?,3]");
  EXPECT_FALSE(s == ShapeOrDie("f32[4,?,3]"));
  EXPECT_TRUE(ShapeOrDie("f32[4,3]").is_static());
  EXPECT_EQ(ShapeOrDie("s32[<=8]{0}").ToString(), "s32[<=8]");
}

TEST(ShapeParseTest, TiledLayoutsAndLayoutExtras) {
  Shape s = ShapeOrDie("f32[8,256]{1,0:T(8,128)(2,1)}");
  EXPECT_EQ(s.layout().minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s.layout().tiles, (std::vector<std::vector<int64_t>>{{8, 128}, {2, 1}}));
  EXPECT_FALSE(s.has_default_layout());
  EXPECT_EQ(s.ToString(), "f32[8,256]{1,0:T(8,128)(2,1)}");

  Shape space = ShapeOrDie("f32[2]{0:S(1)}");
  EXPECT_EQ(space.layout().memory_space, 1);
  EXPECT_EQ(space.ToString(), "f32[2]{0:S(1)}");

  Shape bits = ShapeOrDie("s4[16]{0:E(4)}");
  EXPECT_EQ(bits.layout().element_size_bits, 4);
  EXPECT_EQ(bits.ToString(), "s4[16]{0:E(4)}");

  Shape all = ShapeOrDie("bf16[16,256]{0,1:T(8,128)(2,1)L(1024)E(16)S(2)}");
  EXPECT_EQ(all.layout().tail_padding_alignment, 1024);
  EXPECT_EQ(all.layout().element_size_bits, 16);
  EXPECT_EQ(all.layout().memory_space, 2);
  EXPECT_EQ(all.ToString(), "bf16[16,256]{0,1:T(8,128)(2,1)L(1024)E(16)S(2)}");

  Shape combine = ShapeOrDie("f32[2,3,4]{2,1,0:T(2,*,128)}");
  ASSERT_EQ(combine.layout().tiles.size(), 1u);
  EXPECT_EQ(combine.layout().tiles[0][1], kCombineTileDim);
  EXPECT_EQ(combine.ToString(), "f32[2,3,4]{2,1,0:T(2,*,128)}");

  // A scalar may have extras without dimensions.
  Shape scalar = ShapeOrDie("f32[]{:S(1)}");
  EXPECT_EQ(scalar.layout().memory_space, 1);
  EXPECT_EQ(ShapeOrDie(scalar.ToString()), scalar);

  // Items kiln does not model are kept as text that lexes back the same:
  // words inside stay apart ("D(C U)" is not "D(CU)").
  for (std::string_view text : {"f32[2]{0:D(C)}", "f32[2]{0:D(C U)}", "f32[2]{0:SC(0:2,3)}",
                                "f32[2]{0:P(f32[4]{0})}", "f32[2]{0:#(u32)*(u32)M(8)}"}) {
    Shape kept = ShapeOrDie(text);
    EXPECT_FALSE(kept.layout().other.empty()) << text;
    EXPECT_EQ(kept.ToString(), text);
    EXPECT_EQ(ShapeOrDie(kept.ToString()), kept) << text;
  }

  // Same dims, different tiles: not equal, but compatible.
  Shape other = ShapeOrDie("f32[8,256]{1,0:T(8,128)}");
  EXPECT_FALSE(other == s);
  EXPECT_TRUE(other.Compatible(s));
}

TEST(ShapeParseTest, ShapesRoundTripThroughText) {
  for (std::string_view text :
       {"f32[]", "pred[1,2,3]", "(s32[], (f32[2]{0}, token[]))", "f16[2,3]{0,1}",
        "f32[<=10,?]", "u8[128,8]{1,0:T(8,128)(4,1)}", "s4[64]{0:T(128)E(4)}",
        "bf16[2,2]{1,0:T(2,128)S(1)}", "c64[3]", "f8e5m2[4]", "()", "b(s32[4])",
        "f32[2,4]{1,0:T(2,128)L(256)}"}) {
    Shape s = ShapeOrDie(text);
    Shape again = ShapeOrDie(s.ToString());
    EXPECT_EQ(again, s) << text << " printed as " << s.ToString();
    EXPECT_EQ(again.ToString(), s.ToString());
  }
}

// ToString(print_default_layout=true) spells out every layout; that text
// must parse back too (XLA prints no "{}" for scalars).
TEST(ShapeParseTest, ShapesPrintedWithDefaultLayoutsRoundTrip) {
  for (std::string_view text : {"f32[2,3]", "s32[]", "pred[]", "(f32[], s32[2])", "u8[0]",
                                "f32[<=3,2]", "token[]", "(bf16[], (f32[1]))"}) {
    Shape s = ShapeOrDie(text);
    std::string printed = s.ToString(/*print_default_layout=*/true);
    Result<Shape> again = ParseShape(printed);
    if (!again) {
      ADD_FAILURE() << text << " printed as " << printed << ": " << again.error().ToString();
      continue;
    }
    EXPECT_EQ(*again, s) << text << " printed as " << printed;
  }
}

TEST(ShapeParseTest, ErrorsNamePositionAndExpectation) {
  struct Case {
    std::string_view text;
    std::string_view prefix;
    std::string_view needle;
  };
  for (const Case& c : std::vector<Case>{
           {"f33[2]", "<shape>:1:1:", "unknown element type 'f33' (did you mean f32?)"},
           {"f32[2", "<shape>:1:6:", "expected ',' or ']'"},
           {"f32 [2]x", "<shape>:1:8:", "expected end of shape"},
           {"f32[2,3]{0}", "<shape>:1:11:", "layout has 1 dimensions but the shape has rank 2"},
           {"f32[2]{1}", "<shape>:1:9:", "not a permutation"},
           {"f32[2,2]{0,0}", "<shape>:1:13:", "not a permutation"},
           {"f32[-1]", "<shape>:1:5:", "negative dimension"},
           {"f32[99999999999999999999]", "<shape>:1:5:", "integer out of range"},
           {"(f32[], ", "<shape>:1:9:", "expected a shape"},
           {"f32[2]{0:T(8,}", "<shape>:1:14:", "expected a tile dimension"},
           {"f32[2]{0:D}", "<shape>:1:11:", "expected '(' in layout"},
           {"f32[2]{0:Q(1)}", "<shape>:1:10:", "expected a layout item (D, T, L,"},
           {"f32[2]{0:So(1)}", "<shape>:1:10:", "expected a layout item"},
           {"", "<shape>:1:1:", "expected a shape"},
       }) {
    Result<Shape> s = ParseShape(c.text);
    ASSERT_FALSE(s.has_value()) << c.text << " parsed as " << s->ToString();
    EXPECT_TRUE(s.error().ToString().starts_with(c.prefix)) << c.text << ": " << s.error().ToString();
    EXPECT_NE(s.error().ToString().find(c.needle), std::string::npos) << c.text << ": " << s.error().ToString();
  }
  std::string rank65 = "f32[";
  for (int i = 0; i < 65; ++i) rank65 += i == 0 ? "1" : ",1";
  rank65 += "]";
  Result<Shape> r = ParseShape(rank65);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().ToString().find("rank exceeds 64"), std::string::npos) << r.error().ToString();
}

TEST(ParseShapeListTest, CommasInsideBracketsBelongToTheShape) {
  Result<std::vector<Shape>> shapes = ParseShapeList("s64[], f32[3,5]{0,1},(s32[], bf16[4]),");
  ASSERT_TRUE(shapes) << shapes.error();
  ASSERT_EQ(shapes->size(), 3u);
  EXPECT_EQ((*shapes)[0].ToString(), "s64[]");
  EXPECT_EQ((*shapes)[1].ToString(), "f32[3,5]{0,1}");
  EXPECT_TRUE((*shapes)[2].IsTuple());
  Result<std::vector<Shape>> none = ParseShapeList("");
  ASSERT_TRUE(none) << none.error();
  EXPECT_TRUE(none->empty());
  Result<std::vector<Shape>> bad = ParseShapeList("f32[2],f32[2 3]");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().ToString().find("shape \"f32[2 3]\""), std::string::npos) << bad.error();
  Result<std::vector<Shape>> open = ParseShapeList("s64[],f32[3");
  ASSERT_FALSE(open) << "an unclosed bracket swallowed the last shape";
  EXPECT_NE(open.error().ToString().find("unbalanced"), std::string::npos) << open.error();
}

}  // namespace
}  // namespace kiln::hlo::parser_testing
