// Every module of the HLO corpus (KILN_CORPUS_DIR/hlo/**/*.hlo) parses,
// prints, parses back to an equal module, and prints the same text again.
// Also checks ModulesEqual itself, so that the round trip cannot pass by a
// comparison that never fails.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/module_equal.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/test_corpus.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

namespace fs = std::filesystem;

// A missing or partial corpus must fail, not pass vacuously.
using testing::kMinCorpusModules;

// Corpus modules with instructions written without a shape, which the
// parser rejects with "cannot infer the shape" until shape inference is
// wired into it. Lower this number as inference lands; it must never grow.
constexpr size_t kMaxModulesAwaitingShapeInference = 13;

// Failures reported one by one before the rest are only counted.
constexpr int kMaxReportedFailures = 25;

using testing::CorpusModules;
using testing::CorpusRoot;
using testing::ReadTextFile;

std::string DisplayName(const fs::path& path) {
  return path.lexically_relative(CorpusRoot()).generic_string();
}

bool IsAwaitingShapeInference(const Error& e) {
  return e.message.find("cannot infer the shape") != std::string::npos;
}

// Counts failures and reports the first few in full.
class FailureLog {
 public:
  void Add(const std::string& file, const std::string& what) {
    if (++count_ <= kMaxReportedFailures) ADD_FAILURE() << file << ": " << what;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

TEST(CorpusTest, HasAtLeast700Modules) {
  const auto& files = CorpusModules();
  EXPECT_GE(files.size(), kMinCorpusModules)
      << "HLO corpus missing or incomplete under " << (CorpusRoot() / "hlo")
      << " (set -DKILN_CORPUS_DIR=...)";
}

TEST(CorpusRoundTripTest, EveryModuleParses) {
  const auto& files = CorpusModules();
  ASSERT_GE(files.size(), kMinCorpusModules);
  FailureLog failures;
  std::vector<std::string> awaiting_shape_inference;
  for (const fs::path& path : files) {
    std::string name = DisplayName(path);
    std::string text = ReadTextFile(path);
    ASSERT_FALSE(text.empty()) << name << " is empty or unreadable";
    Result<std::unique_ptr<Module>> m = ParseModule(text, name);
    if (m) continue;
    if (IsAwaitingShapeInference(m.error())) {
      awaiting_shape_inference.push_back(m.error().message);
    } else {
      failures.Add(name, m.error().message);
    }
  }
  std::cout << "[ tracked  ] " << awaiting_shape_inference.size() << " of " << files.size()
            << " corpus modules await shape inference in the parser (limit "
            << kMaxModulesAwaitingShapeInference << "):\n";
  for (const std::string& msg : awaiting_shape_inference) std::cout << "    " << msg << "\n";
  EXPECT_EQ(failures.count(), 0) << failures.count() << " corpus modules fail to parse";
  EXPECT_LE(awaiting_shape_inference.size(), kMaxModulesAwaitingShapeInference)
      << "more corpus modules than before fail with 'cannot infer the shape'";
}

TEST(CorpusRoundTripTest, PrintParseGivesEqualModuleAndFixedPoint) {
  const auto& files = CorpusModules();
  ASSERT_GE(files.size(), kMinCorpusModules);
  FailureLog failures;
  size_t round_tripped = 0;
  for (const fs::path& path : files) {
    std::string name = DisplayName(path);
    Result<std::unique_ptr<Module>> first = ParseModule(ReadTextFile(path), name);
    if (!first) continue;  // reported by EveryModuleParses
    std::string printed = PrintModule(**first);
    Result<std::unique_ptr<Module>> second = ParseModule(printed, name + " (printed)");
    if (!second) {
      failures.Add(name, "printed text does not parse: " + second.error().message);
      continue;
    }
    std::string why;
    if (!ModulesEqual(**first, **second, &why)) {
      failures.Add(name, "printed text parses to a different module: " + why);
      continue;
    }
    std::string reprinted = PrintModule(**second);
    if (reprinted != printed) {
      size_t at = 0;
      while (at < printed.size() && at < reprinted.size() && printed[at] == reprinted[at]) ++at;
      failures.Add(name, "printing is not a fixed point; first difference at byte " +
                             std::to_string(at) + ": '" + printed.substr(at, 60) + "' vs '" +
                             reprinted.substr(at, 60) + "'");
      continue;
    }
    ++round_tripped;
  }
  EXPECT_EQ(failures.count(), 0) << failures.count() << " corpus modules fail the round trip";
  // Everything but the modules awaiting shape inference must have been checked.
  EXPECT_GE(round_tripped + kMaxModulesAwaitingShapeInference, files.size());
}

// The literal expectations beside some modules (<name>.expected.txt, lines
// "param.N = <literal>" and "result = <literal>") parse, and print back to
// text that parses to the same bits.
TEST(CorpusRoundTripTest, SidecarLiteralsParseAndRoundTrip) {
  ASSERT_GE(CorpusModules().size(), kMinCorpusModules);
  FailureLog failures;
  int literals = 0;
  for (const fs::path& module : CorpusModules()) {
    fs::path sidecar = module;
    sidecar.replace_extension(".expected.txt");
    std::error_code ec;
    if (!fs::exists(sidecar, ec)) continue;
    std::istringstream lines(ReadTextFile(sidecar));
    int line_no = 0;
    for (std::string line; std::getline(lines, line);) {
      ++line_no;
      if (!line.starts_with("param.") && !line.starts_with("result")) continue;
      size_t eq = line.find(" = ");
      if (eq == std::string::npos) continue;
      ++literals;
      std::string where = DisplayName(sidecar) + ":" + std::to_string(line_no);
      std::string text = line.substr(eq + 3);
      Result<Literal> lit = ParseLiteral(text);
      if (!lit) {
        failures.Add(where, "does not parse: " + lit.error().message);
        continue;
      }
      std::string printed = lit->ToString();
      Result<Literal> again = ParseLiteral(printed);
      if (!again) {
        failures.Add(where, "printed form '" + printed.substr(0, 80) +
                                "' does not parse: " + again.error().message);
      } else if (!(*again == *lit) || again->ToString() != printed) {
        failures.Add(where, "printed form '" + printed.substr(0, 80) + "' changes the value");
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << failures.count() << " of " << literals
                                 << " sidecar literals fail";
  EXPECT_GE(literals, 100) << "sidecar files missing from the corpus?";
}

// On real modules: ModulesEqual notices a changed name, shape or layout and
// is true again once the change is undone.
TEST(CorpusRoundTripTest, ModulesEqualSeesSmallChangesInCorpusModules) {
  const auto& files = CorpusModules();
  ASSERT_GE(files.size(), kMinCorpusModules);
  FailureLog failures;
  int checked = 0;
  for (size_t f = 0; f < files.size(); f += 7) {  // every 7th module keeps this quick
    std::string name = DisplayName(files[f]);
    std::string text = ReadTextFile(files[f]);
    Result<std::unique_ptr<Module>> a = ParseModule(text, name);
    Result<std::unique_ptr<Module>> b = ParseModule(text, name);
    if (!a || !b) continue;
    Computation& entry = *(*b)->entry();
    Instruction& victim = *entry.instructions()[entry.instructions().size() / 2];
    std::string why;

    std::string old_name(victim.name());
    victim.set_name(old_name + ".renamed");
    if (ModulesEqual(**a, **b, &why)) failures.Add(name, "rename of %" + old_name + " not seen");
    else if (why.find(".renamed") == std::string::npos) failures.Add(name, "bad reason: " + why);
    victim.set_name(old_name);

    Shape old_shape = victim.shape();
    Shape other = old_shape.IsTuple() && old_shape.tuple_shapes().empty()
                      ? Shape(PrimitiveType::kF32, {})
                      : Shape::Tuple({});
    victim.set_shape(other);
    if (ModulesEqual(**a, **b, &why)) failures.Add(name, "shape change of %" + old_name + " not seen");
    else if (why.find("shape") == std::string::npos) failures.Add(name, "bad reason: " + why);

    if (old_shape.IsArray() && old_shape.rank() >= 2) {
      Shape relaid = old_shape;
      std::reverse(relaid.mutable_layout().minor_to_major.begin(),
                   relaid.mutable_layout().minor_to_major.end());
      victim.set_shape(relaid);
      if (ModulesEqual(**a, **b, &why)) failures.Add(name, "layout change of %" + old_name + " not seen");
    }
    victim.set_shape(old_shape);

    if (!ModulesEqual(**a, **b, &why)) failures.Add(name, "not equal after undoing: " + why);
    ++checked;
  }
  EXPECT_EQ(failures.count(), 0);
  EXPECT_GE(checked, 90);
}

// ---------------------------------------------------------------- ModulesEqual

std::unique_ptr<Module> ParseTestModule(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "t.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().message << "\n" << text;
  return m ? std::move(*m) : nullptr;
}

// The reason ModulesEqual gives, or "equal".
std::string Difference(std::string_view a, std::string_view b) {
  auto ma = ParseTestModule(a);
  auto mb = ParseTestModule(b);
  if (ma == nullptr || mb == nullptr) return "parse error";
  std::string why = "stale";
  if (ModulesEqual(*ma, *mb, &why)) {
    EXPECT_EQ(why, "") << "why must be cleared when equal";
    return "equal";
  }
  // The comparison is symmetric in outcome.
  EXPECT_FALSE(ModulesEqual(*mb, *ma));
  return why;
}

constexpr std::string_view kBase = R"(HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  p = f32[2] parameter(0)
  c = f32[2] constant({1, 2})
  a = f32[2] add(p, c), metadata={op_name="a"}
  r = f32[] reduce(a, f32[] constant(0)), dimensions={0}, to_apply=add
  ROOT b = f32[2] broadcast(r), dimensions={}, control-predecessors={c}
}
)";

// `text` with the first occurrence of `from` replaced by `to`.
std::string Replace(std::string text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string Edit(std::string_view from, std::string_view to) {
  return Replace(std::string(kBase), from, to);
}

TEST(ModulesEqualTest, EqualModulesAndReflexivity) {
  EXPECT_EQ(Difference(kBase, kBase), "equal");
  auto m = ParseTestModule(kBase);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(ModulesEqual(*m, *m));
  // Spacing, comments, '%' and old-style typed operands do not matter.
  EXPECT_EQ(Difference(kBase, Edit("a = f32[2] add(p, c)", "%a = f32[2]{0} add(f32[2] %p, /*c*/ %c)")),
            "equal");
}

TEST(ModulesEqualTest, ReportsTheFirstDifference) {
  EXPECT_EQ(Difference(kBase, Edit("HloModule m,", "HloModule n,")), "module name m vs n");
  EXPECT_EQ(Difference(kBase, Edit("is_scheduled=true", "is_scheduled=false")),
            "module header: attribute is_scheduled true vs false");
  EXPECT_EQ(Difference(kBase, Edit(", is_scheduled=true", "")),
            "module header: 1 vs 0 attributes (first extra: is_scheduled on the left)");
  EXPECT_EQ(Difference(kBase, Edit("(f32[2]{0})->", "(f32[2]{0}, s32[])->")),
            "entry_computation_layout: 1 vs 2 parameters");
  EXPECT_EQ(Difference(kBase, Edit("->f32[2]{0}}", "->f32[2]{0:S(1)}}")),
            "entry_computation_layout: result f32[2] vs f32[2]{0:S(1)}");
  EXPECT_EQ(Difference(kBase, Edit("entry_computation_layout={(f32[2]{0})->f32[2]{0}}, ", "")),
            "module header: entry_computation_layout present vs absent");
  EXPECT_EQ(Difference(kBase, Replace(Edit("add {", "add2 {"), "to_apply=add", "to_apply=add2")),
            "computation 0 (%add): name %add vs %add2");
  EXPECT_EQ(Difference(kBase, Edit("}\n", "}, execution_thread=\"t\"\n")),
            "computation %add: execution_thread \"\" vs \"t\"");
  EXPECT_EQ(Difference(kBase, Edit("ROOT s = f32[] add(x, y)", "s = f32[] add(x, y)\n  ROOT t = f32[] add(y, x)")),
            "computation %add: 3 vs 4 instructions (first extra: %t)");
  EXPECT_EQ(Difference(kBase, Edit("add(x, y)", "add(y, x)")),
            "computation %add instruction 2 (%s): operand 0 is instruction 0 (%x) vs instruction 1 (%y)");
  EXPECT_EQ(Difference(kBase, Edit("add(x, y)", "multiply(x, y)")),
            "computation %add instruction 2 (%s): opcode add vs multiply");
  EXPECT_EQ(Difference(kBase, Edit("p = f32[2] parameter(0)", "p = f32[<=2] parameter(0)")),
            "computation %main instruction 0 (%p): shape f32[2] vs f32[<=2]");
  EXPECT_EQ(Difference(kBase, Edit("p = f32[2] parameter(0)", "p = f32[2]{0:T(128)} parameter(0)")),
            "computation %main instruction 0 (%p): shape f32[2] vs f32[2]{0:T(128)}");
  EXPECT_EQ(Difference(kBase, Edit("p = f32[2] parameter(0)", "p = f32[2] parameter(1)")),
            "computation %main instruction 0 (%p): parameter number 0 vs 1");
  EXPECT_EQ(Difference(kBase, Edit("constant({1, 2})", "constant({1, 3})")),
            "computation %main instruction 1 (%c): literal f32[2] {1, 2} vs f32[2] {1, 3}");
  EXPECT_EQ(Difference(kBase, Edit("constant({1, 2})", "constant({1, -nan})")),
            "computation %main instruction 1 (%c): literal f32[2] {1, 2} vs f32[2] {1, -nan}");
  EXPECT_EQ(Difference(kBase, Edit("metadata={op_name=\"a\"}", "metadata={op_name=\"b\"}")),
            "computation %main instruction 2 (%a): attribute metadata {op_name=\"a\"} vs {op_name=\"b\"}");
  EXPECT_EQ(Difference(kBase, Edit(", metadata={op_name=\"a\"}", "")),
            "computation %main instruction 2 (%a): 1 vs 0 attributes (first extra: metadata on the left)");
  EXPECT_EQ(Difference(kBase, Edit("dimensions={0}", "dimensions={1}")),
            "computation %main instruction 4 (%r): attribute dimensions {0} vs {1}");
  EXPECT_EQ(Difference(kBase, Edit("to_apply=add", "to_apply={add}")),
            "computation %main instruction 4 (%r): attribute to_apply not braced vs braced");
  EXPECT_EQ(Difference(kBase, Edit("control-predecessors={c}", "control-predecessors={a}")),
            "computation %main instruction 5 (%b): attribute control-predecessors {%c} vs {%a}");
  EXPECT_EQ(Difference(kBase, Edit("ROOT b = f32[2] broadcast(r), dimensions={}, control-predecessors={c}",
                                   "b = f32[2] broadcast(r), dimensions={}, control-predecessors={c}\n  ROOT q = f32[2] copy(b)")),
            "computation %main: 6 vs 7 instructions (first extra: %q)");
  EXPECT_EQ(Difference(kBase, Edit("ROOT s = f32[] add(x, y)", "s = f32[] add(x, y)")),
            "equal");  // the last instruction is the root either way
  EXPECT_EQ(Difference(kBase, Replace(Edit("ROOT s = ", "s = "), "  y = f32[] parameter(1)",
                                      "  ROOT y = f32[] parameter(1)")),
            "computation %add: root instruction 2 (%s) vs instruction 1 (%y)");
}

TEST(ModulesEqualTest, EntryAndAsyncDifferences) {
  std::string_view two = "HloModule m\nc1 {\n ROOT p = f32[] parameter(0)\n}\nENTRY c2 {\n ROOT q = f32[] parameter(0)\n}\n";
  std::string_view first_entry = "HloModule m\nENTRY c1 {\n ROOT p = f32[] parameter(0)\n}\nc2 {\n ROOT q = f32[] parameter(0)\n}\n";
  EXPECT_EQ(Difference(two, first_entry), "entry computation is number 1 vs 0");
  std::string_view no_entry = "HloModule m\nc1 {\n ROOT p = f32[] parameter(0)\n}\nc2 {\n ROOT q = f32[] parameter(0)\n}\n";
  EXPECT_EQ(Difference(two, no_entry), "equal");  // the last computation is the entry

  std::string_view neg = "HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n s = ((f32[2]), f32[2], u32[]) negate-start(p)\n ROOT d = f32[2] negate-done(s)\n}\n";
  std::string_view cp = "HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n s = ((f32[2]), f32[2], u32[]) copy-start(p)\n ROOT d = f32[2] negate-done(s)\n}\n";
  std::string_view abs = "HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n s = ((f32[2]), f32[2], u32[]) abs-start(p)\n ROOT d = f32[2] negate-done(s)\n}\n";
  EXPECT_EQ(Difference(neg, cp), "computation %e instruction 1 (%s): opcode negate-start vs copy-start");
  EXPECT_EQ(Difference(neg, abs), "computation %e instruction 1 (%s): opcode negate-start vs abs-start");
}

TEST(ModulesEqualTest, WhyMayBeNull) {
  auto a = ParseTestModule(kBase);
  auto b = ParseTestModule(Edit("dimensions={0}", "dimensions={1}"));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(ModulesEqual(*a, *b));
  EXPECT_FALSE(ModulesEqual(*a, *b, nullptr));
}

}  // namespace
}  // namespace kiln::hlo
