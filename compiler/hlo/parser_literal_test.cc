// Unit tests of constants parsed in modules and of literals parsed on their
// own (ParseLiteral), and of printing values back bit-exactly.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/parser_test_util.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo::parser_testing {
namespace {

Literal LiteralOrDie(std::string_view text) {
  Result<Literal> l = ParseLiteral(text);
  EXPECT_TRUE(l.has_value()) << text << ": " << l.error().ToString();
  return l.value_or(Literal());
}

// ---------------------------------------------------------------- constants

// The literal of `ROOT c = <shape> constant(<value>)`, parsed as a module:
// how constants of every element type reach the compiler.
Result<Literal> ParseConstant(std::string_view shape, std::string_view value) {
  std::string text = "HloModule m\nENTRY e {\n  ROOT c = " + std::string(shape) + " constant(" +
                     std::string(value) + ")\n}\n";
  Result<std::unique_ptr<Module>> m = ParseModule(text, "const.hlo");
  if (!m) return std::unexpected(m.error());
  const Literal* lit = (*m)->entry()->root()->literal();
  if (lit == nullptr) return InvalidArgumentError("constant without a literal");
  return *lit;
}

Literal ConstantOrDie(std::string_view shape, std::string_view value) {
  Result<Literal> l = ParseConstant(shape, value);
  EXPECT_TRUE(l.has_value()) << shape << " constant(" << value << "): " << l.error().ToString();
  return l.value_or(Literal());
}

TEST(ConstantParseTest, IntegersOfEveryWidth) {
  EXPECT_EQ(Elements<int8_t>(ConstantOrDie("s8[3]", "{-128, 0, 127}")),
            (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(Elements<uint16_t>(ConstantOrDie("u16[2]", "{0, 65535}")),
            (std::vector<uint16_t>{0, 65535}));
  EXPECT_EQ(Elements<int16_t>(ConstantOrDie("s16[]", "-300")), (std::vector<int16_t>{-300}));
  EXPECT_EQ(Elements<int32_t>(ConstantOrDie("s32[]", "-7")), (std::vector<int32_t>{-7}));
  EXPECT_EQ(Elements<uint32_t>(ConstantOrDie("u32[1]", "{4294967295}")),
            (std::vector<uint32_t>{4294967295u}));
  EXPECT_EQ(Elements<int64_t>(ConstantOrDie("s64[2]", "{-9223372036854775808, 9223372036854775807}")),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  EXPECT_EQ(Elements<uint64_t>(ConstantOrDie("u64[]", "18446744073709551615")),
            (std::vector<uint64_t>{UINT64_MAX}));
  // XLA accepts 2^64-1 for s64 by bit-casting.
  EXPECT_EQ(Elements<int64_t>(ConstantOrDie("s64[]", "18446744073709551615")),
            (std::vector<int64_t>{-1}));
  // Sub-byte types take one byte each.
  Literal s4 = ConstantOrDie("s4[4]", "{-8, -1, 0, 7}");
  EXPECT_EQ(s4.data().size(), 4u);
  EXPECT_EQ(Elements<int8_t>(s4), (std::vector<int8_t>{-8, -1, 0, 7}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("u4[2]", "{0, 15}")), (std::vector<uint8_t>{0, 15}));
  EXPECT_EQ(Elements<int8_t>(ConstantOrDie("s2[2]", "{-2, 1}")), (std::vector<int8_t>{-2, 1}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("u1[2]", "{1, 0}")), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("pred[4]", "{true, false, 1, 0}")),
            (std::vector<uint8_t>{1, 0, 1, 0}));
}

TEST(ConstantParseTest, IntegerRangeErrors) {
  struct Case {
    std::string_view shape, value;
  };
  for (const Case& c : std::vector<Case>{{"s4[]", "8"},
                                         {"s4[]", "-9"},
                                         {"u4[]", "16"},
                                         {"u8[]", "-1"},
                                         {"s8[]", "128"},
                                         {"u1[]", "2"},
                                         {"s32[]", "2147483648"},
                                         {"u64[]", "18446744073709551616"},
                                         {"pred[]", "2"},
                                         {"pred[]", "yes"},
                                         {"s32[]", "1.5"},
                                         {"s32[2]", "{1, 2.5}"}}) {
    Result<Literal> l = ParseConstant(c.shape, c.value);
    ASSERT_FALSE(l.has_value()) << c.shape << " " << c.value << " parsed as " << l->ToString();
    EXPECT_TRUE(l.error().ToString().starts_with("const.hlo:3:")) << l.error().ToString();
    EXPECT_NE(l.error().ToString().find(c.shape.substr(0, c.shape.find('['))), std::string::npos)
        << "error should name the element type: " << l.error().ToString();
  }
}

TEST(ConstantParseTest, WideFloatsAndSpecialValues) {
  Literal f = ConstantOrDie("f32[6]", "{1.5, -2, inf, -inf, nan, -nan}");
  EXPECT_EQ(Elements<uint32_t>(f), (std::vector<uint32_t>{0x3FC00000u, 0xC0000000u, 0x7F800000u,
                                                          0xFF800000u, 0x7FC00000u, 0xFFC00000u}));
  EXPECT_EQ(f.ValueToString(), "{1.5, -2, inf, -inf, nan, -nan}");

  // Negative zero keeps its sign bit, and prints so that it parses back.
  Literal z = ConstantOrDie("f32[2]", "{-0, 0}");
  EXPECT_EQ(Elements<uint32_t>(z), (std::vector<uint32_t>{0x80000000u, 0u}));
  Literal z_again = ConstantOrDie("f32[2]", z.ValueToString());
  EXPECT_TRUE(z_again == z) << z.ValueToString();
  EXPECT_EQ(Elements<uint64_t>(ConstantOrDie("f64[]", "-0.0")),
            (std::vector<uint64_t>{0x8000000000000000u}));

  EXPECT_EQ(Elements<double>(ConstantOrDie("f64[2]", "{0.1, -1e300}")),
            (std::vector<double>{0.1, -1e300}));

  Literal payload = ConstantOrDie("f32[]", "nan(0x7)");
  EXPECT_EQ(Elements<uint32_t>(payload), (std::vector<uint32_t>{0x7F800007u}));
  EXPECT_EQ(payload.ValueToString(), "nan(0x7)");

  EXPECT_FALSE(ParseConstant("f32[]", "1e39").has_value());  // beyond float
  EXPECT_FALSE(ParseConstant("f32[]", "infinity").has_value());
}

TEST(ConstantParseTest, NarrowFloats) {
  EXPECT_EQ(Elements<uint16_t>(ConstantOrDie("bf16[4]", "{1.5, -2, 0.1, 1.00390625}")),
            (std::vector<uint16_t>{0x3FC0, 0xC000, 0x3DCD, 0x3F80}));  // ties to even
  EXPECT_EQ(Elements<uint16_t>(ConstantOrDie("f16[4]", "{1, 65504, -0, inf}")),
            (std::vector<uint16_t>{0x3C00, 0x7BFF, 0x8000, 0x7C00}));
  EXPECT_FALSE(ParseConstant("f16[]", "1e6").has_value());

  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("f8e4m3fn[4]", "{1, -448, nan, 0.5}")),
            (std::vector<uint8_t>{0x38, 0xFE, 0x7F, 0x30}));
  Result<Literal> fn_inf = ParseConstant("f8e4m3fn[]", "inf");
  ASSERT_FALSE(fn_inf.has_value());
  EXPECT_NE(fn_inf.error().ToString().find("infinity"), std::string::npos) << fn_inf.error().ToString();
  EXPECT_FALSE(ParseConstant("f8e4m3fn[]", "1000").has_value());

  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("f8e5m2[3]", "{inf, -inf, 1}")),
            (std::vector<uint8_t>{0x7C, 0xFC, 0x3C}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("f8e4m3fnuz[2]", "{1, nan}")),
            (std::vector<uint8_t>{0x40, 0x80}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("f4e2m1fn[3]", "{0.5, -6, 1.5}")),
            (std::vector<uint8_t>{0x1, 0xF, 0x3}));
  EXPECT_FALSE(ParseConstant("f4e2m1fn[]", "nan").has_value());
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("f8e8m0fnu[2]", "{1, 0.25}")),
            (std::vector<uint8_t>{127, 125}));
}

TEST(ConstantParseTest, NestedArraysTuplesComplexAndSplats) {
  Literal m = ConstantOrDie("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}");
  EXPECT_EQ(Elements<int32_t>(m), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(m.ValueToString(), "{{1, 2, 3}, {4, 5, 6}}");
  // Elements are stored row-major whatever the layout.
  EXPECT_EQ(Elements<int32_t>(ConstantOrDie("s32[2,3]{0,1}", "{{1, 2, 3}, {4, 5, 6}}")),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Elements<uint8_t>(ConstantOrDie("u8[2,1,2]", "{{{1, 2}}, {{3, 4}}}")),
            (std::vector<uint8_t>{1, 2, 3, 4}));

  Result<Literal> ragged = ParseConstant("s32[2,3]", "{{1, 2}, {4, 5, 6}}");
  ASSERT_FALSE(ragged.has_value());
  EXPECT_TRUE(ragged.error().ToString().starts_with("const.hlo:3:31:")) << ragged.error().ToString();
  EXPECT_NE(ragged.error().ToString().find("has 2 elements"), std::string::npos);

  Literal t = ConstantOrDie("(f32[], (s32[1], pred[]))", "(1, ({2}, true))");
  ASSERT_TRUE(t.shape().IsTuple());
  ASSERT_EQ(t.tuple_elements().size(), 2u);
  EXPECT_EQ(Elements<uint8_t>(t.tuple_elements()[1].tuple_elements()[1]), (std::vector<uint8_t>{1}));
  EXPECT_EQ(t.ValueToString(), "(1, ({2}, true))");

  Literal c = ConstantOrDie("c64[2]", "{(1, 2), (3, -4)}");
  EXPECT_EQ(Elements<float>(c), (std::vector<float>{1, 2, 3, -4}));
  EXPECT_EQ(c.ValueToString(), "{(1, 2), (3, -4)}");
  EXPECT_EQ(Elements<double>(ConstantOrDie("c128[]", "(1.5, -0.5)")),
            (std::vector<double>{1.5, -0.5}));
  EXPECT_FALSE(ParseConstant("c64[]", "1").has_value());

  Literal empty = ConstantOrDie("f32[2,0]", "{{}, {}}");
  EXPECT_TRUE(empty.data().empty());
  EXPECT_FALSE(ParseConstant("f32[2,0]", "{{}}").has_value());
  EXPECT_FALSE(ParseConstant("f32[0,2]", "{{}}").has_value());

  Literal elided = ConstantOrDie("f32[1000,1000]", "{...}");
  EXPECT_TRUE(elided.elided());
  EXPECT_TRUE(elided.data().empty());
  EXPECT_EQ(elided.ValueToString(), "{...}");

  // A scalar written for an array fills it.
  EXPECT_EQ(Elements<float>(ConstantOrDie("f32[2,3]", "7")), std::vector<float>(6, 7.0f));
  EXPECT_EQ(Elements<uint16_t>(ConstantOrDie("bf16[3]", "-inf")),
            std::vector<uint16_t>(3, 0xFF80));
  // Splats are filled by doubling copies: counts that are not powers of two,
  // every element width, and no elements at all.
  EXPECT_EQ(Elements<double>(ConstantOrDie("f64[7]", "2.5")), std::vector<double>(7, 2.5));
  std::vector<float> complex;
  for (int i = 0; i < 5; ++i) complex.insert(complex.end(), {1.0f, -2.0f});
  EXPECT_EQ(Elements<float>(ConstantOrDie("c64[5]", "(1, -2)")), complex);
  EXPECT_EQ(ConstantOrDie("s4[3,3]", "-3").ValueToString(), "{{-3, -3, -3}, {-3, -3, -3}, {-3, -3, -3}}");
  EXPECT_EQ(Elements<int32_t>(ConstantOrDie("s32[1000,3]", "-9")), std::vector<int32_t>(3000, -9));
  EXPECT_TRUE(ConstantOrDie("f32[3,0]", "7").data().empty());
}

// (shape, value) pairs covering every element type and the special values.
const std::vector<std::pair<std::string_view, std::string_view>>& ConstantCases() {
  static const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"pred[3]", "{true, false, true}"},
      {"s2[2]", "{-2, 1}"},
      {"u2[2]", "{3, 0}"},
      {"s4[3]", "{-8, 7, 0}"},
      {"u4[2]", "{15, 1}"},
      {"s8[2]", "{-128, 127}"},
      {"u8[2]", "{255, 0}"},
      {"s16[2]", "{-32768, 32767}"},
      {"u16[1]", "{65535}"},
      {"s32[2]", "{-2147483648, 2147483647}"},
      {"u32[1]", "{4294967295}"},
      {"s64[2]", "{-9223372036854775808, 9223372036854775807}"},
      {"u64[1]", "{18446744073709551615}"},
      {"f32[8]", "{0.1, -0, 3.4028235e+38, 1e-45, inf, -inf, nan, -nan}"},
      {"f32[2]", "{nan(0x1), -nan(0x3fffff)}"},
      {"f64[5]", "{0.1, -0, 1.7976931348623157e+308, 5e-324, nan(0x12345)}"},
      {"f16[5]", "{0.1, -0, 65504, 6e-08, -inf}"},
      {"bf16[5]", "{0.1, -0, 3.3895314e+38, 1e-40, nan}"},
      {"f8e4m3fn[4]", "{0.1, -448, 0.001953125, nan}"},
      {"f8e5m2[3]", "{57344, -1.5258789e-05, inf}"},
      {"f8e4m3b11fnuz[2]", "{0.1, 30}"},
      {"f8e5m2fnuz[2]", "{-0.5, 57344}"},
      {"f8e4m3fnuz[2]", "{240, nan}"},
      {"f8e4m3[2]", "{-240, inf}"},
      {"f8e3m4[2]", "{0.0625, 15.5}"},
      {"f4e2m1fn[4]", "{0.5, -6, 1.5, -0}"},
      {"f8e8m0fnu[3]", "{1, 2.3509887e-38, 1.7014118e+38}"},
      {"c64[2]", "{(1, -0), (nan, inf)}"},
      {"c128[1]", "{(0.1, -1e-300)}"},
      {"s32[2,2,2]", "{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}"},
      {"(f32[], (s32[2], ()), pred[])", "(1, ({3, 4}, ()), false)"},
      {"f32[0]", "{}"},
      {"f32[2,0]", "{{}, {}}"},
      {"f32[0,2]", "{}"},
      {"s32[1,0,3]", "{{}}"},
      {"f32[]", "-0"},
      {"bf16[]", "-nan"},
  };
  return cases;
}

TEST(ConstantParseTest, ValuesRoundTripBitExactly) {
  for (const auto& [shape, value] : ConstantCases()) {
    Literal lit = ConstantOrDie(shape, value);
    std::string printed = lit.ValueToString();
    Literal again = ConstantOrDie(shape, printed);
    EXPECT_TRUE(again == lit) << shape << " " << value << " printed as " << printed;
    EXPECT_EQ(again.ValueToString(), printed) << shape << " " << value;
  }
  // And all of them together through PrintModule.
  std::string text = "HloModule constants\nENTRY e {\n";
  for (size_t i = 0; i < ConstantCases().size(); ++i) {
    text += "  c" + std::to_string(i) + " = " + std::string(ConstantCases()[i].first) +
            " constant(" + std::string(ConstantCases()[i].second) + ")\n";
  }
  text += "  ROOT t = () tuple()\n}\n";
  auto m = ModuleOrDie(text);
  ASSERT_NE(m, nullptr);
  ExpectModuleRoundTrip(*m);
}

// Arrays without elements print one brace level per non-zero leading
// dimension: f32[2,0] is {{}, {}}, f32[0,2] is {}.
TEST(ConstantParseTest, ZeroElementArraysPrintParseably) {
  struct Case {
    std::string_view shape, value;
  };
  for (const Case& c : std::vector<Case>{{"f32[0]", "{}"},
                                         {"f32[2,0]", "{{}, {}}"},
                                         {"f32[0,2]", "{}"},
                                         {"s32[1,0,3]", "{{}}"},
                                         {"u8[2,1,0]", "{{{}}, {{}}}"}}) {
    Literal lit = ConstantOrDie(c.shape, c.value);
    EXPECT_EQ(lit.ValueToString(), c.value) << c.shape;
  }
}


// ---------------------------------------------------------------- literals

// ParseLiteral reads the sidecar form "<shape> <value>".
TEST(LiteralParseTest, ScalarsMatricesTuplesAndElided) {
  EXPECT_EQ(Elements<int32_t>(LiteralOrDie("s32[] -7")), (std::vector<int32_t>{-7}));
  EXPECT_EQ(Elements<uint32_t>(LiteralOrDie("f32[] -inf")), (std::vector<uint32_t>{0xFF800000u}));
  EXPECT_EQ(Elements<int32_t>(LiteralOrDie("s32[2,2] {{1, 2}, {3, 4}}")),
            (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(Elements<float>(LiteralOrDie("f32[2] {1.5, 2}")), (std::vector<float>{1.5f, 2.0f}));
  EXPECT_EQ(Elements<uint8_t>(LiteralOrDie("pred[2] {true, false}")), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(Elements<float>(LiteralOrDie("c64[1] {(1, 2)}")), (std::vector<float>{1, 2}));
  EXPECT_TRUE(LiteralOrDie("f32[1000,1000] {...}").elided());
  EXPECT_TRUE(LiteralOrDie("f32[2,0] {{}, {}}").data().empty());

  Literal t = LiteralOrDie("(f32[] 1, (pred[] true, s32[2,1] {{2}, {3}}))");
  ASSERT_EQ(t.tuple_elements().size(), 2u);
  EXPECT_EQ(Elements<int32_t>(t.tuple_elements()[1].tuple_elements()[1]),
            (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(t.ToString(), "(f32[] 1, (pred[] true, s32[2,1] {{2}, {3}}))");

  // A layout may be written between shape and value.
  Literal laid = LiteralOrDie("f32[2,2]{0,1} {{1.5, 2}, {3, 4}}");
  EXPECT_EQ(Elements<float>(laid), (std::vector<float>{1.5f, 2, 3, 4}));
}

// The value of a rank-1 literal starting with an integer ("f32[2] {1, 2}",
// the example in parser.h and the form of the corpus sidecars) looks like a
// layout; it must still parse as a value.
TEST(LiteralParseTest, RankOneIntegerValuesAreNotTakenForLayouts) {
  struct Case {
    std::string_view text;
    std::string_view printed;
  };
  for (const Case& c : std::vector<Case>{{"f32[2] {1, 2}", "f32[2] {1, 2}"},
                                         {"s32[3] {2, 4, 6}", "s32[3] {2, 4, 6}"},
                                         {"s32[1] {0}", "s32[1] {0}"},
                                         {"u8[2] {1, 0}", "u8[2] {1, 0}"},
                                         {"bf16[4] {1, 3, -2, 42}", "bf16[4] {1, 3, -2, 42}"},
                                         {"(s32[1] {2}, pred[] true)", "(s32[1] {2}, pred[] true)"},
                                         {"f32[2]{0} {1, 2}", "f32[2] {1, 2}"}}) {
    Result<Literal> l = ParseLiteral(c.text);
    if (!l) {
      ADD_FAILURE() << c.text << ": " << l.error().ToString();
      continue;
    }
    EXPECT_EQ(l->ToString(), c.printed);
  }
}

TEST(LiteralParseTest, ToStringRoundTrips) {
  for (const auto& [shape, value] : ConstantCases()) {
    Literal lit = ConstantOrDie(shape, value);
    std::string printed = lit.ToString();
    Result<Literal> again = ParseLiteral(printed);
    if (!again) {
      ADD_FAILURE() << printed << ": " << again.error().ToString();
      continue;
    }
    EXPECT_TRUE(*again == lit) << shape << " " << value << " printed as " << printed;
    EXPECT_EQ(again->ToString(), printed);
  }
}

TEST(LiteralParseTest, ErrorsNamePositionAndExpectation) {
  struct Case {
    std::string_view text;
    std::string_view prefix;
    std::string_view needle;
  };
  for (const Case& c : std::vector<Case>{
           {"f32[2] {1.5, x}", "<literal>:1:14:", "expected a number"},
           {"f32[2] {1.5 2}", "<literal>:1:13:", "expected ',' or '}'"},
           {"f32[2] 1.5, 2}", "<literal>:1:8:", "expected '{'"},
           {"(f32[] 1 f32[] 2)", "<literal>:1:10:", "expected ',' or ')'"},
           {"f32[] 1 2", "<literal>:1:9:", "expected end of literal"},
           {"c64[] (1 2)", "<literal>:1:10:", "expected ',' in complex value"},
           {"f32[2] {1.5, 2", "<literal>:1:15:", "expected ',' or '}'"},
           {"s32[2,2] {{1, 2}, {3}}", "<literal>:1:19:", "has 1 elements"},
           {"f33[] 1", "<literal>:1:1:", "unknown element type 'f33' (did you mean f32?)"},
           {"token[] 1", "<literal>:1:9:", "no literal of shape token[]"},
       }) {
    Result<Literal> l = ParseLiteral(c.text);
    ASSERT_FALSE(l.has_value()) << c.text << " parsed as " << l->ToString();
    EXPECT_TRUE(l.error().ToString().starts_with(c.prefix)) << c.text << ": " << l.error().ToString();
    EXPECT_NE(l.error().ToString().find(c.needle), std::string::npos) << c.text << ": " << l.error().ToString();
  }
}

}  // namespace
}  // namespace kiln::hlo::parser_testing
