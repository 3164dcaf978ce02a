// Unit tests of the HLO lexer (lexer.h) on small hand-written inputs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/lexer.h"

namespace kiln::hlo {
namespace {

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
  // A byte outside printable ASCII is named by its hex value.
  for (auto [bad, named] : {std::pair<std::string_view, std::string_view>{"\xff", "'\\xff'"}, {"\x01", "'\\x01'"}}) {
    Lexer lex(bad);
    EXPECT_EQ(lex.Next().kind, TokKind::kError);
    EXPECT_NE(lex.error().find(named), std::string::npos) << lex.error();
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

// Token::line counts every newline passed: between tokens, inside
// comments, strings and raw brace groups, and over text skipped by Seek.
TEST(LexerTest, TokensCarryTheirLine) {
  std::string_view text =
      "a\n  b /* one\ntwo */ c\n\"x\ny\" d {\n \"}\n\" \n} e\n// note\nf(1)\n\ng";
  Lexer lex(text);
  auto next = [&] { return lex.Next(); };
  Token a = next();
  EXPECT_EQ(a.line, 1u);
  EXPECT_EQ(next().line, 2u);  // b
  EXPECT_EQ(next().line, 3u);  // c, after a two-line comment
  Token str = next();
  EXPECT_EQ(str.kind, TokKind::kString);
  EXPECT_EQ(str.line, 4u);     // a string starting on line 4 ...
  EXPECT_EQ(next().line, 5u);  // ... ends on line 5, where d is
  Token open = next();
  ASSERT_EQ(open.kind, TokKind::kLbrace);
  std::string_view raw;
  ASSERT_TRUE(lex.RawBraced(open, &raw));
  Token e = next();
  EXPECT_EQ(e.text, "e");
  EXPECT_EQ(e.line, 8u);
  Token f = next();
  EXPECT_EQ(f.text, "f");
  EXPECT_EQ(f.line, 10u);
  // Seek past "(1)\n\n" to g.
  lex.Seek(text.size() - 1);
  Token g = next();
  EXPECT_EQ(g.text, "g");
  EXPECT_EQ(g.line, 12u);
  for (const Token& t : {a, e, f, g}) {
    EXPECT_EQ(static_cast<uint32_t>(LocateOffset(text, t.offset).line), t.line) << t.text;
  }
}

}  // namespace
}  // namespace kiln::hlo
