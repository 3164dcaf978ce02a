// Unit tests of the HLO lexer, shape/literal parsers and module parser on
// small hand-written inputs, and of printing values back.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/lexer.h"
#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

// ---------------------------------------------------------------- helpers

std::vector<Token> LexAll(std::string_view text) {
  Lexer lex(text);
  std::vector<Token> out;
  while (true) {
    Token t = lex.Next();
    out.push_back(t);
    if (t.kind == TokKind::kEof || t.kind == TokKind::kError) return out;
  }
}

std::vector<TokKind> Kinds(std::string_view text) {
  std::vector<TokKind> out;
  for (const Token& t : LexAll(text)) out.push_back(t.kind);
  return out;
}

std::vector<std::string> Texts(std::string_view text) {
  std::vector<std::string> out;
  for (const Token& t : LexAll(text)) out.emplace_back(t.text);
  return out;
}

Shape ShapeOrDie(std::string_view text) {
  Result<Shape> s = ParseShape(text);
  EXPECT_TRUE(s.has_value()) << text << ": " << s.error().message;
  return s.value_or(Shape());
}

Literal LiteralOrDie(std::string_view text) {
  Result<Literal> l = ParseLiteral(text);
  EXPECT_TRUE(l.has_value()) << text << ": " << l.error().message;
  return l.value_or(Literal());
}

std::unique_ptr<Module> ModuleOrDie(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().message << "\n" << text;
  return m ? std::move(*m) : nullptr;
}

std::string ModuleError(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_FALSE(m.has_value()) << "parsed unexpectedly:\n" << text;
  return m ? std::string() : m.error().message;
}

const Instruction* FindInstruction(const Computation& c, std::string_view name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

// The literal's bytes read as consecutive T values (bit patterns when T
// is an unsigned integer of the element's width).
template <typename T>
std::vector<T> Elements(const Literal& lit) {
  std::vector<T> out(lit.data().size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), lit.data().data(), out.size() * sizeof(T));
  return out;
}

// Print -> parse -> compare, and printing is a fixed point.
void ExpectModuleRoundTrip(const Module& m) {
  std::string printed = PrintModule(m);
  Result<std::unique_ptr<Module>> again = ParseModule(printed, "printed.hlo");
  ASSERT_TRUE(again.has_value()) << again.error().message << "\n" << printed;
  std::string why;
  EXPECT_TRUE(ModulesEqual(m, **again, &why)) << why << "\n" << printed;
  EXPECT_EQ(PrintModule(**again), printed);
}

// ---------------------------------------------------------------- lexer

TEST(LexerTest, PunctuationNamesAndKinds) {
  EXPECT_EQ(Kinds("%a.b-1 = f32[2]{0} add(%x, y), "),
            (std::vector<TokKind>{TokKind::kPercentName, TokKind::kEqual, TokKind::kIdent,
                                  TokKind::kLsquare, TokKind::kInt, TokKind::kRsquare,
                                  TokKind::kLbrace, TokKind::kInt, TokKind::kRbrace,
                                  TokKind::kIdent, TokKind::kLparen, TokKind::kPercentName,
                                  TokKind::kComma, TokKind::kIdent, TokKind::kRparen,
                                  TokKind::kComma, TokKind::kEof}));
  EXPECT_EQ(Texts("%a.b-1 = f32")[0], "a.b-1");  // '%' stripped
  EXPECT_EQ(Kinds(": * ? # + ~ ... -> <= ( ) [ ] { }"),
            (std::vector<TokKind>{TokKind::kColon, TokKind::kAsterisk, TokKind::kQuestion,
                                  TokKind::kOctothorp, TokKind::kPlus, TokKind::kTilde,
                                  TokKind::kDots, TokKind::kArrow, TokKind::kLeq,
                                  TokKind::kLparen, TokKind::kRparen, TokKind::kLsquare,
                                  TokKind::kRsquare, TokKind::kLbrace, TokKind::kRbrace,
                                  TokKind::kEof}));
}

TEST(LexerTest, NameColonAndAttributeName) {
  std::vector<Token> t = LexAll("p0: dimensions={0} a==b");
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(t[0].kind, TokKind::kNameColon);
  EXPECT_EQ(t[0].text, "p0");
  EXPECT_EQ(t[1].kind, TokKind::kAttributeName);
  EXPECT_EQ(t[1].text, "dimensions");
  // "a==b" is not an attribute name: a, =, =, b.
  EXPECT_EQ(t[5].kind, TokKind::kIdent);
  EXPECT_EQ(t[5].text, "a");
  EXPECT_EQ(t[6].kind, TokKind::kEqual);
  EXPECT_EQ(t[7].kind, TokKind::kEqual);
}

TEST(LexerTest, Numbers) {
  EXPECT_EQ(Kinds("1 -2 1.5 -1.5e-3 1e5 1. nan -nan nan(0x7f) -inf inf"),
            (std::vector<TokKind>{TokKind::kInt, TokKind::kInt, TokKind::kDecimal,
                                  TokKind::kDecimal, TokKind::kDecimal,
                                  TokKind::kDecimal, TokKind::kDecimal, TokKind::kDecimal,
                                  TokKind::kDecimal, TokKind::kNegInf, TokKind::kIdent,
                                  TokKind::kEof}));
  EXPECT_EQ(Texts("nan(0x7f) -1.5e-3")[0], "nan(0x7f)");
  EXPECT_EQ(Texts("nan(0x7f) -1.5e-3")[1], "-1.5e-3");
  // "nanx" and "-infinity" are not numbers; as in XLA, ".5" is not either.
  EXPECT_EQ(Kinds("nanx")[0], TokKind::kIdent);
  EXPECT_EQ(Kinds("-infinity")[0], TokKind::kError);
  EXPECT_EQ(Kinds(".5")[0], TokKind::kError);
}

TEST(LexerTest, WindowPaddingAndDimLabelPatterns) {
  std::vector<Token> t = LexAll("b01f_01io->b01f 3x3 0_1x1_1 -1_2 1x2x3 bf_io->bf");
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].kind, TokKind::kDimLabels);
  EXPECT_EQ(t[0].text, "b01f_01io->b01f");
  EXPECT_EQ(t[1].kind, TokKind::kDxD);
  EXPECT_EQ(t[2].kind, TokKind::kPad);
  EXPECT_EQ(t[2].text, "0_1x1_1");
  EXPECT_EQ(t[3].kind, TokKind::kPad);
  EXPECT_EQ(t[4].kind, TokKind::kDxD);
  EXPECT_EQ(t[4].text, "1x2x3");
  EXPECT_EQ(t[5].kind, TokKind::kDimLabels);
}

TEST(LexerTest, StringsKeepQuotesAndUnescape) {
  std::vector<Token> t = LexAll(R"("a\"b\n" "")");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kind, TokKind::kString);
  EXPECT_EQ(t[0].text, R"("a\"b\n")");
  std::string s;
  ASSERT_TRUE(UnescapeString(t[0].text, &s));
  EXPECT_EQ(s, "a\"b\n");
  ASSERT_TRUE(UnescapeString(t[1].text, &s));
  EXPECT_EQ(s, "");
  EXPECT_TRUE(UnescapeString(R"("\x41\101")", &s));
  EXPECT_EQ(s, "AA");
  EXPECT_FALSE(UnescapeString(R"("\q")", &s));
}

TEST(LexerTest, UnterminatedStringIsAnError) {
  Lexer lex(R"(a "abc)");
  EXPECT_EQ(lex.Next().kind, TokKind::kIdent);
  Token t = lex.Next();
  EXPECT_EQ(t.kind, TokKind::kError);
  EXPECT_EQ(t.offset, 2u);
  EXPECT_NE(lex.error().find("unterminated string"), std::string::npos) << lex.error();
  // Errors are sticky.
  EXPECT_EQ(lex.Next().kind, TokKind::kError);
  EXPECT_EQ(lex.Next().kind, TokKind::kError);
}

TEST(LexerTest, CommentsAreSkippedAndMarkSpacing) {
  std::vector<Token> t = LexAll("a // line comment ( {\nb/* block\n ) */c/**/d");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].text, "a");
  EXPECT_EQ(t[1].text, "b");
  EXPECT_TRUE(t[1].newline_before);
  EXPECT_EQ(t[2].text, "c");
  EXPECT_TRUE(t[2].space_before);
  EXPECT_TRUE(t[2].newline_before);  // the block comment spans a newline
  EXPECT_EQ(t[3].text, "d");
  EXPECT_TRUE(t[3].space_before);
  EXPECT_FALSE(t[3].newline_before);
  EXPECT_EQ(t[4].kind, TokKind::kEof);
  // A line comment at the very end, without a newline.
  EXPECT_EQ(Kinds("x // end"), (std::vector<TokKind>{TokKind::kIdent, TokKind::kEof}));
}

TEST(LexerTest, UnterminatedBlockCommentIsAnError) {
  Lexer lex("a /* never closed");
  EXPECT_EQ(lex.Next().kind, TokKind::kIdent);
  EXPECT_EQ(lex.Next().kind, TokKind::kError);
  EXPECT_NE(lex.error().find("unterminated"), std::string::npos) << lex.error();
}

TEST(LexerTest, NulAndStrayBytesAreErrors) {
  Lexer nul(std::string_view("a\0b", 3));
  EXPECT_EQ(nul.Next().kind, TokKind::kIdent);
  EXPECT_EQ(nul.Next().kind, TokKind::kError);
  EXPECT_NE(nul.error().find("NUL"), std::string::npos) << nul.error();
  for (std::string_view bad : {"\x01", "\xff", "@", "$", "/", "<", "."}) {
    Lexer lex(bad);
    EXPECT_EQ(lex.Next().kind, TokKind::kError) << "input byte " << int(uint8_t(bad[0]));
    EXPECT_FALSE(lex.error().empty());
  }
}

TEST(LexerTest, EofIsSticky) {
  Lexer lex("  \n ");
  EXPECT_EQ(lex.Next().kind, TokKind::kEof);
  EXPECT_EQ(lex.Next().kind, TokKind::kEof);
  Lexer empty("");
  EXPECT_EQ(empty.Next().kind, TokKind::kEof);
}

TEST(LexerTest, RawBracedSkipsBracesInStrings) {
  std::string_view text = R"({a="}{" {b={}}} rest)";
  Lexer lex(text);
  Token open = lex.Next();
  ASSERT_EQ(open.kind, TokKind::kLbrace);
  std::string_view raw;
  ASSERT_TRUE(lex.RawBraced(open, &raw));
  EXPECT_EQ(raw, R"({a="}{" {b={}}})");
  Token rest = lex.Next();
  EXPECT_EQ(rest.text, "rest");

  Lexer unbalanced("{ {a} \"}\" ");
  Token o2 = unbalanced.Next();
  EXPECT_FALSE(unbalanced.RawBraced(o2, &raw));
}

TEST(LexerTest, LocateOffset) {
  std::string_view s = "ab\ncd\n\nx";
  EXPECT_EQ(LocateOffset(s, 0).line, 1);
  EXPECT_EQ(LocateOffset(s, 0).column, 1);
  EXPECT_EQ(LocateOffset(s, 4).line, 2);
  EXPECT_EQ(LocateOffset(s, 4).column, 2);
  EXPECT_EQ(LocateOffset(s, 7).line, 4);
  EXPECT_EQ(LocateOffset(s, 7).column, 1);
  EXPECT_EQ(LocateOffset(s, 1000).line, 4);  // clamped to the end
}

// ---------------------------------------------------------------- shapes

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
      ADD_FAILURE() << text << " printed as " << printed << ": " << again.error().message;
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
           {"f33[2]", "<shape>:1:1:", "expected an element type"},
           {"f32[2", "<shape>:1:6:", "expected ',' or ']'"},
           {"f32 [2]x", "<shape>:1:8:", "expected end of shape"},
           {"f32[2,3]{0}", "<shape>:1:11:", "layout has 1 dimensions but the shape has rank 2"},
           {"f32[2]{1}", "<shape>:1:9:", "not a permutation"},
           {"f32[2,2]{0,0}", "<shape>:1:13:", "not a permutation"},
           {"f32[-1]", "<shape>:1:5:", "negative dimension"},
           {"f32[99999999999999999999]", "<shape>:1:5:", "integer out of range"},
           {"(f32[], ", "<shape>:1:9:", "expected a shape"},
           {"f32[2]{0:T(8,}", "<shape>:1:14:", "expected a tile dimension"},
           {"f32[2]{0:Q}", "<shape>:1:11:", "expected '(' in layout"},
           {"", "<shape>:1:1:", "expected a shape"},
       }) {
    Result<Shape> s = ParseShape(c.text);
    ASSERT_FALSE(s.has_value()) << c.text << " parsed as " << s->ToString();
    EXPECT_TRUE(s.error().message.starts_with(c.prefix)) << c.text << ": " << s.error().message;
    EXPECT_NE(s.error().message.find(c.needle), std::string::npos)
        << c.text << ": " << s.error().message;
  }
  std::string rank65 = "f32[";
  for (int i = 0; i < 65; ++i) rank65 += i == 0 ? "1" : ",1";
  rank65 += "]";
  Result<Shape> r = ParseShape(rank65);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("rank exceeds 64"), std::string::npos) << r.error().message;
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
  if (lit == nullptr) return MakeError("constant without a literal");
  return *lit;
}

Literal ConstantOrDie(std::string_view shape, std::string_view value) {
  Result<Literal> l = ParseConstant(shape, value);
  EXPECT_TRUE(l.has_value()) << shape << " constant(" << value << "): " << l.error().message;
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
    EXPECT_TRUE(l.error().message.starts_with("const.hlo:3:")) << l.error().message;
    EXPECT_NE(l.error().message.find(c.shape.substr(0, c.shape.find('['))), std::string::npos)
        << "error should name the element type: " << l.error().message;
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
  EXPECT_NE(fn_inf.error().message.find("infinity"), std::string::npos) << fn_inf.error().message;
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
  EXPECT_TRUE(ragged.error().message.starts_with("const.hlo:3:31:")) << ragged.error().message;
  EXPECT_NE(ragged.error().message.find("has 2 elements"), std::string::npos);

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
      ADD_FAILURE() << c.text << ": " << l.error().message;
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
      ADD_FAILURE() << printed << ": " << again.error().message;
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
           {"f33[] 1", "<literal>:1:1:", "expected an element type"},
           {"token[] 1", "<literal>:1:9:", "no literal of shape token[]"},
       }) {
    Result<Literal> l = ParseLiteral(c.text);
    ASSERT_FALSE(l.has_value()) << c.text << " parsed as " << l->ToString();
    EXPECT_TRUE(l.error().message.starts_with(c.prefix)) << c.text << ": " << l.error().message;
    EXPECT_NE(l.error().message.find(c.needle), std::string::npos)
        << c.text << ": " << l.error().message;
  }
}

// ---------------------------------------------------------------- modules

constexpr std::string_view kSmallModule = R"(HloModule small, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %c = f32[2]{0} add(%a, %b), metadata={op_name="jit(f)/add" source_file="x.py"}
  %zero = f32[] constant(0)
  %r = f32[] reduce(%c, %zero), dimensions={0}, to_apply=%add
  ROOT %out = f32[2]{0} broadcast(%r), dimensions={}
}
)";

TEST(ModuleParseTest, BuildsTheIr) {
  auto m = ModuleOrDie(kSmallModule);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "small");
  ASSERT_TRUE(m->entry_layout().has_value());
  EXPECT_EQ(m->entry_layout()->parameters.size(), 2u);
  EXPECT_EQ(m->entry_layout()->result, ShapeOrDie("f32[2]"));
  ASSERT_EQ(m->computations().size(), 2u);
  const Computation& add = *m->computations()[0];
  const Computation& main = *m->computations()[1];
  EXPECT_EQ(add.name(), "add");
  EXPECT_FALSE(add.is_entry());
  EXPECT_EQ(m->entry(), &main);
  EXPECT_TRUE(main.is_entry());
  EXPECT_EQ(main.instruction_count(), 6);
  EXPECT_EQ(main.root()->name(), "out");
  ASSERT_EQ(main.parameter_count(), 2);
  EXPECT_EQ(main.parameters()[1]->name(), "b");
  EXPECT_EQ(main.parameters()[1]->parameter_number(), 1);

  const Instruction* c = FindInstruction(main, "c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->opcode(), Opcode::kAdd);
  EXPECT_EQ(c->operand(0), main.parameters()[0]);
  EXPECT_EQ(c->operand(1), main.parameters()[1]);
  ASSERT_NE(c->AttributeText("metadata"), nullptr);
  EXPECT_EQ(*c->AttributeText("metadata"), R"({op_name="jit(f)/add" source_file="x.py"})");
  EXPECT_EQ(main.parameters()[0]->users(), (std::vector<Instruction*>{const_cast<Instruction*>(c)}));

  const Instruction* r = FindInstruction(main, "r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->called_computations(), (std::vector<Computation*>{m->computations()[0].get()}));
  ASSERT_NE(r->AttributeText("dimensions"), nullptr);
  EXPECT_EQ(*r->AttributeText("dimensions"), "{0}");

  const Instruction* zero = FindInstruction(main, "zero");
  ASSERT_NE(zero, nullptr);
  ASSERT_NE(zero->literal(), nullptr);
  EXPECT_EQ(Elements<float>(*zero->literal()), (std::vector<float>{0.0f}));
  EXPECT_EQ(add.root()->name(), "sum");

  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, HeaderAttributesAndExecutionThread) {
  auto m = ModuleOrDie(R"(HloModule h, is_scheduled=true, frontend_attributes={fingerprint="x,y"}, num_partitions=2

%side {
  ROOT %p = s32[] parameter(0)
}, execution_thread="side"

ENTRY %e {
  ROOT %p = s32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->attributes().size(), 3u);
  EXPECT_EQ(m->attributes()[0].name, "is_scheduled");
  EXPECT_EQ(m->attributes()[0].value, "true");
  EXPECT_EQ(m->attributes()[1].kind, Attribute::Kind::kRaw);
  EXPECT_EQ(m->attributes()[1].value, R"({fingerprint="x,y"})");
  EXPECT_EQ(m->attributes()[2].value, "2");
  EXPECT_EQ(m->computations()[0]->execution_thread(), "side");
  EXPECT_EQ(m->computations()[1]->execution_thread(), "");
  ExpectModuleRoundTrip(*m);
}

// The thread name is a string: quotes and backslashes in it are escaped
// when printed.
TEST(ModuleParseTest, ExecutionThreadWithEscapesRoundTrips) {
  auto m = ModuleOrDie(
      "HloModule m\nc {\n ROOT p = f32[] parameter(0)\n}, execution_thread=\"a\\\"b\\\\c\"\n"
      "ENTRY e {\n ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computations()[0]->execution_thread(), "a\"b\\c");
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, EntryDefaultsToLastComputation) {
  auto m = ModuleOrDie("HloModule m\nc1 {\n ROOT p = f32[] parameter(0)\n}\nc2 {\n ROOT q = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "c2");
  EXPECT_TRUE(m->entry()->is_entry());
  EXPECT_FALSE(m->computations()[0]->is_entry());
}

TEST(ModuleParseTest, CommentsAreIgnored) {
  auto plain = ModuleOrDie(kSmallModule);
  std::string commented = R"(// leading comment
HloModule small, /* header */ entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}
// CHECK: something
%add (x: f32[], y: f32[]) -> f32[] { // trailing
  %x = f32[] parameter(0) /* after */
  %y = /* inside */ f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, /* arg */ f32[] %y)
}
/* multi
   line { ( [ */
ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %c = f32[2]{0} add(%a, %b), metadata={op_name="jit(f)/add" source_file="x.py"} // x
  %zero = f32[] constant(/* zero */ 0)
  %r = f32[] reduce(%c, %zero), dimensions={ /* d */ 0}, to_apply=%add
  ROOT %out = f32[2]{0} broadcast(%r), dimensions={}
}
// trailing comment without newline)";
  auto with_comments = ModuleOrDie(commented);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(with_comments, nullptr);
  std::string why;
  EXPECT_TRUE(ModulesEqual(*plain, *with_comments, &why)) << why;
}

TEST(ModuleParseTest, AttributeSpacingIsCanonical) {
  auto spaced = ModuleOrDie(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1, 0}
  ROOT c = f32[1,1,3,2] convolution(f32[1,1,3,2] parameter(1), f32[1,1,2,2] parameter(2)), window={size=1x2 stride=1x1 pad=0_0x0_1}, dim_labels=b01f_01io->b01f, sharding={devices=[2,1]0,1}
}
)");
  auto tight = ModuleOrDie(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  ROOT c = f32[1,1,3,2] convolution(f32[1,1,3,2] parameter(1), f32[1,1,2,2] parameter(2)), window={size=1x2   stride=1x1
      pad=0_0x0_1}, dim_labels=b01f_01io->b01f, sharding={ devices=[2, 1] 0, 1 }
}
)");
  ASSERT_NE(spaced, nullptr);
  ASSERT_NE(tight, nullptr);
  const Computation& a = *spaced->entry();
  const Computation& b = *tight->entry();
  EXPECT_EQ(*FindInstruction(a, "t")->AttributeText("dimensions"), "{1,0}");
  EXPECT_EQ(*FindInstruction(b, "t")->AttributeText("dimensions"), "{1,0}");
  EXPECT_EQ(*a.root()->AttributeText("window"), "{size=1x2 stride=1x1 pad=0_0x0_1}");
  EXPECT_EQ(*b.root()->AttributeText("window"), *a.root()->AttributeText("window"));
  EXPECT_EQ(*b.root()->AttributeText("sharding"), *a.root()->AttributeText("sharding"));
  EXPECT_EQ(*b.root()->AttributeText("dim_labels"), "b01f_01io->b01f");
  std::string why;
  EXPECT_TRUE(ModulesEqual(*spaced, *tight, &why)) << why;
  ExpectModuleRoundTrip(*spaced);
}

TEST(ModuleParseTest, NestedInstructionOperands) {
  auto m = ModuleOrDie(R"(HloModule m
ENTRY e {
  ROOT r = s32[] add(s32[] parameter(0), s32[] multiply(s32[] parameter(1), s32[] constant(3)))
}
)");
  ASSERT_NE(m, nullptr);
  const Computation& e = *m->entry();
  ASSERT_EQ(e.instruction_count(), 5);
  // Nested instructions come before their user, operands before users.
  EXPECT_EQ(e.instructions()[0]->opcode(), Opcode::kParameter);
  EXPECT_EQ(e.instructions()[1]->opcode(), Opcode::kParameter);
  EXPECT_EQ(e.instructions()[2]->opcode(), Opcode::kConstant);
  EXPECT_EQ(e.instructions()[3]->opcode(), Opcode::kMultiply);
  EXPECT_EQ(e.instructions()[4]->opcode(), Opcode::kAdd);
  const Instruction* root = e.root();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->parameter_number(), 0);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(Elements<int32_t>(*root->operand(1)->operand(1)->literal()), (std::vector<int32_t>{3}));
  EXPECT_EQ(e.parameter_count(), 2);
  // Every nested instruction gets a distinct name.
  std::set<std::string> names;
  for (const auto& i : e.instructions()) names.insert(i->name());
  EXPECT_EQ(names.size(), 5u);
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, NamesWithoutSpaces) {
  auto m = ModuleOrDie("HloModule m\nENTRY e{\nx=f32[2]parameter(0)\ny=f32[2]negate(x),metadata={}\nROOT z=f32[2]add(x,y)\n}");
  ASSERT_NE(m, nullptr);
  const Computation& e = *m->entry();
  ASSERT_EQ(e.instruction_count(), 3);
  EXPECT_EQ(e.instructions()[0]->name(), "x");
  EXPECT_EQ(e.instructions()[1]->opcode(), Opcode::kNegate);
  EXPECT_EQ(e.root()->name(), "z");
  EXPECT_EQ(e.root()->operand(1), e.instructions()[1].get());
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, ReferencesAsyncOpsAndControlPredecessors) {
  auto m = ModuleOrDie(R"(HloModule m

%cond (p: (s32[], f32[4])) -> pred[] {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %v = f32[4] get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[4]) tuple(%j, %v)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body, control-predecessors={%zero}
  %start = ((f32[4]), f32[4], u32[]) negate-start(%x), control-predecessors={%w, %init}
  %done = f32[4] negate-done(%start)
  ROOT %out = f32[4] get-tuple-element(%w), index=1, control-predecessors={%done}
}
)");
  ASSERT_NE(m, nullptr);
  const Computation& main = *m->entry();
  const Instruction* w = FindInstruction(main, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->called_computations(),
            (std::vector<Computation*>{m->computations()[0].get(), m->computations()[1].get()}));
  ASSERT_EQ(w->control_predecessors().size(), 1u);
  EXPECT_EQ(w->control_predecessors()[0]->name(), "zero");
  const Instruction* start = FindInstruction(main, "start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(start->async_wrapped_opcode(), "negate");
  EXPECT_EQ(start->OpcodeText(), "negate-start");
  EXPECT_EQ(start->control_predecessors().size(), 2u);
  EXPECT_EQ(FindInstruction(main, "done")->opcode(), Opcode::kAsyncDone);
  const Attribute* cp = main.root()->FindAttribute("control-predecessors");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->kind, Attribute::Kind::kInstructions);
  EXPECT_TRUE(cp->braced);
  ExpectModuleRoundTrip(*m);
}

TEST(ModuleParseTest, ErrorsNameFileLineColumnAndExpectation) {
  struct Case {
    std::string_view text;
    std::string_view prefix;
    std::string_view needle;
  };
  for (const Case& c : std::vector<Case>{
           {"", "test.hlo:1:1:", "expected 'HloModule'"},
           {"HloModule", "test.hlo:1:10:", "expected a module name"},
           {"HloModule m", "test.hlo:1:12:", "expected a computation"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0\n}", "test.hlo:4:1:",
            "expected ')' after parameter number"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(q)\n}",
            "test.hlo:4:26:", "operand %q is not defined"},
           {"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  p = f32[2] negate(p)\n}",
            "test.hlo:4:3:", "defined twice"},
           {"HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] parameter(1)\n}",
            "test.hlo:4:3:", "more than one ROOT"},
           {"HloModule m\nENTRY e {\n  p = f32[] frobnicate(p)\n}", "test.hlo:3:13:",
            "unknown opcode 'frobnicate'"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}",
            "test.hlo:4:36:", "computation %f is not defined"},
           {"HloModule m\nENTRY a {\n ROOT p = f32[] parameter(0)\n}\nENTRY b {\n ROOT p = f32[] parameter(0)\n}",
            "test.hlo:5:1:", "more than one ENTRY"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0), sharding={replicated}, sharding={maximal}\n}",
            "test.hlo:3:50:", "given twice"},
           {"HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}", "test.hlo:3:13:",
            "expected ',' or ']'"},
           {"HloModule m\nENTRY e {\n  c = f32[2] constant({1, 2, 3})\n}", "test.hlo:3:23:",
            "has 3 elements"},
           {"HloModule m\nENTRY e {\n  c = f32[] constant(0)", "test.hlo:3:24:",
            "expected an instruction or '}'"},
           {"HloModule m\nENTRY e {\n}", "test.hlo:3:1:", "has no instructions"},
           {"HloModule m\nENTRY e {\n  p = f32[] parameter(0), control-predecessors={nope}\n}",
            "test.hlo:3:49:", "control predecessor %nope"},
       }) {
    std::string message = ModuleError(c.text);
    EXPECT_TRUE(message.starts_with(c.prefix)) << c.text << "\n=> " << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.text << "\n=> " << message;
  }
}

TEST(ModuleParseTest, HugeSplatConstantIsRejectedWithoutAllocating) {
  std::string message =
      ModuleError("HloModule m\nENTRY e {\n  ROOT c = f32[4294967296,4294967296] constant(0)\n}");
  EXPECT_TRUE(message.starts_with("test.hlo:3:")) << message;
  EXPECT_NE(message.find("too large"), std::string::npos) << message;
}

TEST(ModuleParseTest, PrintInstruction) {
  auto m = ModuleOrDie(kSmallModule);
  ASSERT_NE(m, nullptr);
  const Computation& main = *m->entry();
  EXPECT_EQ(PrintInstruction(*FindInstruction(main, "r")),
            "  %r = f32[] reduce(%c, %zero), dimensions={0}, to_apply=%add");
  EXPECT_EQ(PrintInstruction(*main.root()),
            "  ROOT %out = f32[2] broadcast(%r), dimensions={}");
  EXPECT_EQ(PrintInstruction(*FindInstruction(main, "zero")), "  %zero = f32[] constant(0)");
}

}  // namespace
}  // namespace kiln::hlo
