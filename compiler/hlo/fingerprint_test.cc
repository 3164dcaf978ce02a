// Tests of the canonical fingerprint (fingerprint.h).
//
// Hand-written modules pin down single properties: instruction order, dead
// computations, default layouts, control edges, channel ids and the
// per-component sub-hashes. The corpus tests take every module under
// KILN_CORPUS_DIR/hlo that parses, rewrite its printed form in ways the key
// must ignore (names, metadata, instruction order, computation order,
// attribute order, whitespace, comments, '%' sigils, typed operands,
// channel id numbers) and in ways it must see (a dimension, an element type,
// a layout, an attribute, a comparison direction, an opcode, a constant, the
// order of non-commutative operands, parameter numbers, a callee,
// backend_config, the module header, the chip and compile options),
// re-parse it and compare keys and sub-hashes. Counts go to stdout.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo {

// Hashes in failure messages as hex (found by gtest through ADL).
static void PrintTo(const Hash128& h, std::ostream* os) { *os << h.Hex(); }

namespace {

// ---------------------------------------------------------------- helpers

Result<Fingerprint> FingerprintText(std::string_view text, const FingerprintOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(text, "test.hlo"));
  return FingerprintModule(*module, options);
}

// Fingerprint of hand-written text; a parse or fingerprint error fails the test.
Fingerprint Fp(std::string_view text, const FingerprintOptions& options = {}) {
  Result<Fingerprint> fp = FingerprintText(text, options);
  EXPECT_TRUE(fp.has_value()) << (fp ? "" : fp.error().message) << "\n" << text;
  return fp.value_or(Fingerprint{});
}

std::vector<Hash128> CalledHashes(const Fingerprint& fp) {
  std::vector<Hash128> out;
  for (const CalledComputationHash& c : fp.called_computations) out.push_back(c.hash);
  return out;
}

// The same, in hash order (computations may be listed in another order).
std::vector<Hash128> SortedCalledHashes(const Fingerprint& fp) {
  std::vector<Hash128> out = CalledHashes(fp);
  std::sort(out.begin(), out.end());
  return out;
}

// Every sub-hash and the key equal (names of called computations aside).
void ExpectSameFingerprint(const Fingerprint& a, const Fingerprint& b, const std::string& what) {
  EXPECT_EQ(a.key, b.key) << what;
  EXPECT_EQ(a.parameter_shapes, b.parameter_shapes) << what;
  EXPECT_EQ(a.entry_body, b.entry_body) << what;
  EXPECT_EQ(SortedCalledHashes(a), SortedCalledHashes(b)) << what;
  EXPECT_EQ(a.module_config, b.module_config) << what;
  EXPECT_EQ(a.options, b.options) << what;
  EXPECT_EQ(a.target, b.target) << what;
}

// ------------------------------------------------ hand-written modules

constexpr std::string_view kOrderA = R"(
HloModule order_a

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p0: f32[2,3], p1: f32[2,3]) -> (f32[2,3], f32[2]) {
  %p0 = f32[2,3] parameter(0)
  %p1 = f32[2,3] parameter(1)
  %a = f32[2,3] add(%p0, %p1)
  %m = f32[2,3] multiply(%p0, %p1)
  %d = f32[2,3] subtract(%a, %m)
  %zero = f32[] constant(0)
  %r = f32[2] reduce(%m, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[2,3], f32[2]) tuple(%d, %r)
}
)";

// kOrderA with independent instructions in another order, other names and
// the computations in another order of definition where allowed.
constexpr std::string_view kOrderB = R"(
HloModule order_b

%sum (a: f32[], b: f32[]) -> f32[] {
  %b = f32[] parameter(1)
  %a = f32[] parameter(0)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %entry {
  %zero = f32[] constant(0)
  %q1 = f32[2,3] parameter(1)
  %q0 = f32[2,3] parameter(0)
  %prod = f32[2,3] multiply(%q0, %q1)
  %red = f32[2] reduce(%prod, %zero), dimensions={1}, to_apply=%sum
  %plus = f32[2,3] add(%q0, %q1)
  %diff = f32[2,3] subtract(%plus, %prod)
  ROOT %out = (f32[2,3], f32[2]) tuple(%diff, %red)
}
)";

TEST(FingerprintTest, KeyIsThirtyTwoLowercaseHexDigits) {
  Fingerprint fp = Fp(kOrderA);
  std::string hex = fp.key.Hex();
  ASSERT_EQ(hex.size(), 32u);
  for (char c : hex) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << hex;
  }
  // The digits are the key's bits, high word first.
  std::ostringstream expected;
  expected << std::hex << std::setfill('0') << std::setw(16) << fp.key.high << std::setw(16)
           << fp.key.low;
  EXPECT_EQ(hex, expected.str());
  EXPECT_EQ((Hash128{0x0123456789abcdefULL, 0xfedcba9876543210ULL}.Hex()),
            "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(Hash128{}.Hex(), std::string(32, '0'));
  EXPECT_EQ(fp.format_version, kCompilerFormatVersion);
}

TEST(FingerprintTest, SameGraphInDifferentInstructionOrderHasSameKey) {
  Fingerprint a = Fp(kOrderA);
  Fingerprint b = Fp(kOrderB);
  ExpectSameFingerprint(a, b, "kOrderA vs kOrderB");
}

TEST(FingerprintTest, KeyIsDeterministic) {
  Fingerprint a = Fp(kOrderA);
  Fingerprint b = Fp(kOrderA);
  EXPECT_EQ(a.key, b.key);
  EXPECT_NE(a.key, Hash128{});
}

TEST(FingerprintTest, DeadComputationDoesNotChangeKey) {
  std::string with_dead(kOrderA);
  with_dead.insert(with_dead.find("ENTRY"), R"(%never_called (z: f32[]) -> f32[] {
  %z = f32[] parameter(0)
  ROOT %n = f32[] negate(%z)
}

)");
  Fingerprint a = Fp(kOrderA);
  Fingerprint b = Fp(with_dead);
  ExpectSameFingerprint(a, b, "unused computation added");
  EXPECT_EQ(b.called_computations.size(), 1u);
}

TEST(FingerprintTest, DefaultLayoutWrittenOrNotHasSameKey) {
  constexpr std::string_view kImplicit = R"(
HloModule m
ENTRY %main {
  %p = f32[2,3] parameter(0)
  %t = f32[3,2] transpose(%p), dimensions={1,0}
  ROOT %n = f32[3,2] negate(%t)
}
)";
  constexpr std::string_view kExplicit = R"(
HloModule m
ENTRY %main {
  %p = f32[2,3]{1,0} parameter(0)
  %t = f32[3,2]{1,0} transpose(%p), dimensions={1,0}
  ROOT %n = f32[3,2]{1,0} negate(%t)
}
)";
  constexpr std::string_view kColumnMajor = R"(
HloModule m
ENTRY %main {
  %p = f32[2,3]{0,1} parameter(0)
  %t = f32[3,2]{1,0} transpose(%p), dimensions={1,0}
  ROOT %n = f32[3,2]{1,0} negate(%t)
}
)";
  Fingerprint implicit = Fp(kImplicit);
  Fingerprint explicit_layout = Fp(kExplicit);
  ExpectSameFingerprint(implicit, explicit_layout, "default layout written out");
  Fingerprint column_major = Fp(kColumnMajor);
  EXPECT_NE(implicit.key, column_major.key);
  EXPECT_NE(implicit.parameter_shapes[0], column_major.parameter_shapes[0]);
  EXPECT_EQ(implicit.parameter_shape_text[0], "f32[2,3]");
  EXPECT_EQ(column_major.parameter_shape_text[0], "f32[2,3]{0,1}");
}

TEST(FingerprintTest, NamesMetadataCommentsAndWhitespaceDoNotChangeKey) {
  constexpr std::string_view kPlain = R"(
HloModule plain
ENTRY %main {
  %p0 = f32[4] parameter(0)
  %p1 = f32[4] parameter(1)
  %c = pred[4] compare(%p0, %p1), direction=LT
  ROOT %s = f32[4] select(%c, %p0, %p1)
}
)";
  constexpr std::string_view kDecorated = R"(// a comment before the module
HloModule   other_name  /* block */
ENTRY   %entry_computation   {
  %arg.0 = f32[4]   parameter( 0 ) , metadata={op_type="x" op_name="jit(f)/x" source_file="a.py" source_line=3}
  /* between */ %arg.1   =   f32[4]{0} parameter(1)   // trailing comment
  %cmp.7 = pred[4] compare( %arg.0 ,
                            %arg.1 ),
      direction=LT, metadata={op_name="lt"}
  ROOT %sel = f32[4] select(%cmp.7, %arg.0, %arg.1), statistics={visualizing_index=1}
}
)";
  ExpectSameFingerprint(Fp(kPlain), Fp(kDecorated), "decorated module");
}

TEST(FingerprintTest, ChannelIdNumbersDoNotChangeKey) {
  constexpr std::string_view kTemplate = R"(
HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %p = f32[8] parameter(0)
  %a = f32[8] all-reduce(%p), channel_id=A, replica_groups={{0,1}}, to_apply=%add
  ROOT %b = f32[8] all-reduce(%a), channel_id=B, replica_groups={{0,1}}, to_apply=%add
}
)";
  auto with_ids = [&](std::string_view a, std::string_view b) {
    std::string text(kTemplate);
    text.replace(text.find("channel_id=A"), 12, "channel_id=" + std::string(a));
    text.replace(text.find("channel_id=B"), 12, "channel_id=" + std::string(b));
    return text;
  };
  Fingerprint base = Fp(with_ids("1", "2"));
  ExpectSameFingerprint(base, Fp(with_ids("17", "4")), "channel ids renumbered");
  // Presence of a channel id still counts.
  std::string without = with_ids("1", "2");
  without.erase(without.find(", channel_id=2"), 14);
  EXPECT_NE(base.key, Fp(without).key);
}

TEST(FingerprintTest, SensitiveToShapesTypesAttributesOpcodesConstantsAndOperandOrder) {
  const std::string base(kOrderA);
  Fingerprint fp = Fp(base);
  auto changed = [&](std::string_view from, std::string_view to, size_t nth = 0) {
    std::string text = base;
    size_t at = 0;
    for (size_t i = 0; i <= nth; ++i) {
      at = text.find(from, i == 0 ? 0 : at + 1);
      if (at == std::string::npos) {
        ADD_FAILURE() << "no '" << from << "' in the base module";
        return Hash128{};
      }
    }
    text.replace(at, from.size(), to);
    return Fp(text).key;
  };
  EXPECT_NE(fp.key, changed("%p1 = f32[2,3]", "%p1 = f32[2,4]"));
  EXPECT_NE(fp.key, changed("%p1 = f32[2,3]", "%p1 = bf16[2,3]"));
  EXPECT_NE(fp.key, changed("%p1 = f32[2,3]", "%p1 = f32[2,3]{0,1}"));
  EXPECT_NE(fp.key, changed("dimensions={1}", "dimensions={0}"));
  EXPECT_NE(fp.key, changed("add(%p0, %p1)", "multiply(%p0, %p1)"));
  EXPECT_NE(fp.key, changed("subtract(%a, %m)", "subtract(%m, %a)"));
  EXPECT_NE(fp.key, changed("constant(0)", "constant(1)"));
  EXPECT_NE(fp.key, changed("ROOT %s = f32[] add", "ROOT %s = f32[] maximum"));
  EXPECT_NE(fp.key, changed("tuple(%d, %r)", "tuple(%d, %r), sharding={replicated}"));
  EXPECT_NE(fp.key, changed("to_apply=%add", "to_apply=%add, backend_config={\"k\":1}"));
}

TEST(FingerprintTest, ComparisonDirectionChangesKey) {
  constexpr std::string_view kCompare = R"(
HloModule m
ENTRY %main {
  %p0 = s32[4] parameter(0)
  %p1 = s32[4] parameter(1)
  ROOT %c = pred[4] compare(%p0, %p1), direction=DIR
}
)";
  std::set<Hash128> keys;
  for (std::string_view dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    std::string text(kCompare);
    text.replace(text.find("DIR"), 3, dir);
    keys.insert(Fp(text).key);
  }
  EXPECT_EQ(keys.size(), 6u);
}

constexpr std::string_view kComponents = R"(
HloModule components

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%mul (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] multiply(%x, %y)
}

ENTRY %main {
  %p0 = f32[4] parameter(0)
  %p1 = f32[4] parameter(1)
  %p2 = f32[] parameter(2)
  %r = f32[] reduce(%p1, %p2), dimensions={0}, to_apply=%add
  %q = f32[] reduce(%p0, %p2), dimensions={0}, to_apply=%mul
  %s = f32[] add(%r, %q)
  %b = f32[4] broadcast(%s), dimensions={}
  ROOT %o = f32[4] add(%p0, %b)
}
)";

struct ComponentDiff {
  std::vector<bool> parameter_shapes;
  bool entry_body, called, module_config, options, target, key;
};

ComponentDiff Diff(const Fingerprint& a, const Fingerprint& b) {
  ComponentDiff d{};
  EXPECT_EQ(a.parameter_shapes.size(), b.parameter_shapes.size());
  for (size_t i = 0; i < std::min(a.parameter_shapes.size(), b.parameter_shapes.size()); ++i) {
    d.parameter_shapes.push_back(a.parameter_shapes[i] != b.parameter_shapes[i]);
  }
  d.entry_body = a.entry_body != b.entry_body;
  d.called = CalledHashes(a) != CalledHashes(b);
  d.module_config = a.module_config != b.module_config;
  d.options = a.options != b.options;
  d.target = a.target != b.target;
  d.key = a.key != b.key;
  return d;
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(FingerprintTest, SubHashesOfTheComponents) {
  Fingerprint base = Fp(kComponents);
  ASSERT_EQ(base.parameter_shapes.size(), 3u);
  EXPECT_EQ(base.parameter_shape_text, (std::vector<std::string>{"f32[4]", "f32[4]", "f32[]"}));
  ASSERT_EQ(base.called_computations.size(), 2u);
  EXPECT_EQ(base.called_computations[0].name, "add");
  EXPECT_EQ(base.called_computations[1].name, "mul");
  // Same shape, same hash: the sub-hash is of the shape only.
  EXPECT_EQ(base.parameter_shapes[0], base.parameter_shapes[1]);
  EXPECT_NE(base.parameter_shapes[0], base.parameter_shapes[2]);
}

TEST(FingerprintTest, ParameterShapeChangesOnlyItsSubHash) {
  Fingerprint base = Fp(kComponents);
  Fingerprint changed = Fp(Replace(std::string(kComponents), "%p1 = f32[4]", "%p1 = f32[5]"));
  ComponentDiff d = Diff(base, changed);
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, true, false}));
  EXPECT_TRUE(d.entry_body);
  EXPECT_FALSE(d.called);
  EXPECT_FALSE(d.module_config);
  EXPECT_FALSE(d.options);
  EXPECT_FALSE(d.target);
  EXPECT_TRUE(d.key);
  EXPECT_EQ(changed.parameter_shape_text[1], "f32[5]");

  Fingerprint typed = Fp(Replace(std::string(kComponents), "%p2 = f32[]", "%p2 = bf16[]"));
  d = Diff(base, typed);
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, true}));
  EXPECT_TRUE(d.key);
  EXPECT_EQ(typed.parameter_shape_text[2], "bf16[]");
}

TEST(FingerprintTest, EntryBodyChangeLeavesParameterAndCalleeHashes) {
  Fingerprint base = Fp(kComponents);
  Fingerprint changed =
      Fp(Replace(std::string(kComponents), "%s = f32[] add(%r, %q)", "%s = f32[] subtract(%r, %q)"));
  ComponentDiff d = Diff(base, changed);
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, false}));
  EXPECT_TRUE(d.entry_body);
  EXPECT_FALSE(d.called);
  EXPECT_FALSE(d.module_config);
  EXPECT_FALSE(d.options);
  EXPECT_FALSE(d.target);
  EXPECT_TRUE(d.key);
}

TEST(FingerprintTest, CalledComputationChangeShowsInItsSubHash) {
  Fingerprint base = Fp(kComponents);
  Fingerprint changed = Fp(
      Replace(std::string(kComponents), "ROOT %s = f32[] multiply(%x, %y)", "ROOT %s = f32[] maximum(%x, %y)"));
  ComponentDiff d = Diff(base, changed);
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, false}));
  ASSERT_EQ(changed.called_computations.size(), 2u);
  EXPECT_EQ(base.called_computations[0].hash, changed.called_computations[0].hash);  // %add
  EXPECT_NE(base.called_computations[1].hash, changed.called_computations[1].hash);  // %mul
  EXPECT_TRUE(d.entry_body);  // the entry calls it
  EXPECT_FALSE(d.module_config);
  EXPECT_FALSE(d.options);
  EXPECT_FALSE(d.target);
  EXPECT_TRUE(d.key);
}

TEST(FingerprintTest, ModuleConfigChangeShowsInItsSubHash) {
  Fingerprint base = Fp(kComponents);
  Fingerprint changed = Fp(Replace(std::string(kComponents), "HloModule components",
                                   "HloModule components, replica_count=2"));
  ComponentDiff d = Diff(base, changed);
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, false}));
  EXPECT_FALSE(d.entry_body);
  EXPECT_FALSE(d.called);
  EXPECT_TRUE(d.module_config);
  EXPECT_FALSE(d.options);
  EXPECT_FALSE(d.target);
  EXPECT_TRUE(d.key);

  Fingerprint layout = Fp(Replace(std::string(kComponents), "HloModule components",
                                  "HloModule components, entry_computation_layout="
                                  "{(f32[4]{0}, f32[4]{0}, f32[])->f32[4]{0:T(256)}}"));
  d = Diff(base, layout);
  EXPECT_TRUE(d.module_config);
  EXPECT_FALSE(d.entry_body);
  EXPECT_TRUE(d.key);
}

TEST(FingerprintTest, ChipAndCompileOptionsChangeOnlyTheirSubHashes) {
  Fingerprint base = Fp(kComponents);
  EXPECT_EQ(base.key, Fp(kComponents, FingerprintOptions{}).key);

  FingerprintOptions chip;
  chip.chip = "v5p";
  ComponentDiff d = Diff(base, Fp(kComponents, chip));
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, false}));
  EXPECT_FALSE(d.entry_body);
  EXPECT_FALSE(d.called);
  EXPECT_FALSE(d.module_config);
  EXPECT_FALSE(d.options);
  EXPECT_TRUE(d.target);
  EXPECT_TRUE(d.key);

  FingerprintOptions opts;
  opts.compile_options = "autotune=0;opt_level=2";
  d = Diff(base, Fp(kComponents, opts));
  EXPECT_EQ(d.parameter_shapes, (std::vector<bool>{false, false, false}));
  EXPECT_FALSE(d.entry_body);
  EXPECT_FALSE(d.called);
  EXPECT_FALSE(d.module_config);
  EXPECT_TRUE(d.options);
  EXPECT_FALSE(d.target);
  EXPECT_TRUE(d.key);

  // Every chip gives its own key.
  std::set<Hash128> keys;
  for (const char* c : {"v4", "v5e", "v5p", "v6e", "tpu7x"}) {
    FingerprintOptions o;
    o.chip = c;
    keys.insert(Fp(kComponents, o).key);
  }
  EXPECT_EQ(keys.size(), 5u);
}

// Known bug, disabled until fixed (run with --gtest_also_run_disabled_tests):
// the parser accepts a control predecessor defined after its successor, but
// the fingerprint's first pass reads the predecessor's hash before it is
// computed (all zeros), so the key depends on the textual order of two
// data-independent instructions.
TEST(FingerprintTest, ControlPredecessorWrittenAfterItsSuccessorKeepsKey) {
  constexpr std::string_view kBefore = R"(
HloModule m
ENTRY %main {
  %p0 = f32[] parameter(0)
  %b = f32[] exponential(%p0)
  %a = f32[] negate(%p0), control-predecessors={%b}
  ROOT %t = (f32[], f32[]) tuple(%a, %b)
}
)";
  constexpr std::string_view kAfter = R"(
HloModule m
ENTRY %main {
  %p0 = f32[] parameter(0)
  %a = f32[] negate(%p0), control-predecessors={%b}
  %b = f32[] exponential(%p0)
  ROOT %t = (f32[], f32[]) tuple(%a, %b)
}
)";
  ExpectSameFingerprint(Fp(kBefore), Fp(kAfter), "control predecessor after its successor");
}

// Control edges count: with and without one, and to different predecessors.
TEST(FingerprintTest, ControlPredecessorsChangeKey) {
  constexpr std::string_view kTemplate = R"(
HloModule m
ENTRY %main {
  %p0 = f32[] parameter(0)
  %b = f32[] exponential(%p0)
  %c = f32[] log(%p0)
  %a = f32[] negate(%p0)EDGE
  ROOT %t = (f32[], f32[], f32[]) tuple(%a, %b, %c)
}
)";
  std::set<Hash128> keys;
  for (std::string_view edge : {"", ", control-predecessors={%b}", ", control-predecessors={%c}",
                                ", control-predecessors={%b, %c}"}) {
    keys.insert(Fp(Replace(std::string(kTemplate), "EDGE", edge)).key);
  }
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(Fp(Replace(std::string(kTemplate), "EDGE", ", control-predecessors={%b, %c}")).key,
            Fp(Replace(std::string(kTemplate), "EDGE", ", control-predecessors={%c, %b}")).key);
}

// Known bug, disabled until fixed: channel ids count only by presence, so
// which send a recv pairs with is lost. Here %r1 receives %p0 in one module
// and %p1 in the other (the root computes p0 - p1 or p1 - p0), yet both get
// the same key. Renumbering must keep the grouping of ids, not drop it.
TEST(FingerprintTest, ChannelIdPairingChangesKey) {
  constexpr std::string_view kTemplate = R"(
HloModule m
ENTRY %main {
  %tok = token[] after-all()
  %p0 = f32[2] parameter(0)
  %p1 = f32[2] parameter(1)
  %s1 = (f32[2], u32[], token[]) send(%p0, %tok), channel_id=1
  %sd1 = token[] send-done(%s1), channel_id=1
  %s2 = (f32[2], u32[], token[]) send(%p1, %tok), channel_id=2
  %sd2 = token[] send-done(%s2), channel_id=2
  %r1 = (f32[2], u32[], token[]) recv(%tok), channel_id=R1
  %rd1 = (f32[2], token[]) recv-done(%r1), channel_id=R1
  %r2 = (f32[2], u32[], token[]) recv(%tok), channel_id=R2
  %rd2 = (f32[2], token[]) recv-done(%r2), channel_id=R2
  %g1 = f32[2] get-tuple-element(%rd1), index=0
  %g2 = f32[2] get-tuple-element(%rd2), index=0
  ROOT %o = f32[2] subtract(%g1, %g2)
}
)";
  auto with = [&](std::string_view r1, std::string_view r2) {
    std::string text(kTemplate);
    for (int n = 0; n < 2; ++n) text = Replace(text, "channel_id=R1", "channel_id=" + std::string(r1));
    for (int n = 0; n < 2; ++n) text = Replace(text, "channel_id=R2", "channel_id=" + std::string(r2));
    return text;
  };
  Fingerprint paired = Fp(with("1", "2"));
  Fingerprint crossed = Fp(with("2", "1"));
  EXPECT_NE(paired.key, crossed.key);
  // Renumbering all ids consistently still keeps the key.
  std::string renumbered = with("9", "5");
  renumbered = Replace(renumbered, "send(%p0, %tok), channel_id=1", "send(%p0, %tok), channel_id=9");
  renumbered = Replace(renumbered, "send-done(%s1), channel_id=1", "send-done(%s1), channel_id=9");
  renumbered = Replace(renumbered, "send(%p1, %tok), channel_id=2", "send(%p1, %tok), channel_id=5");
  renumbered = Replace(renumbered, "send-done(%s2), channel_id=2", "send-done(%s2), channel_id=5");
  EXPECT_EQ(paired.key, Fp(renumbered).key);
}

TEST(FingerprintTest, FailsWithoutRootInsteadOfCrashing) {
  Module module("empty");
  auto comp = std::make_unique<Computation>("main");
  module.AddComputation(std::move(comp), /*is_entry=*/true);
  Result<Fingerprint> fp = FingerprintModule(module, {});
  EXPECT_FALSE(fp.has_value());

  Module no_entry("no_entry");
  EXPECT_FALSE(FingerprintModule(no_entry, {}).has_value());
}

// The printed form of the same module parses back to the same key.
TEST(FingerprintTest, PrintedModuleHasSameKey) {
  for (std::string_view text : {kOrderA, kOrderB, kComponents}) {
    Result<std::unique_ptr<Module>> m = ParseModule(text);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    Result<Fingerprint> a = FingerprintModule(**m, {});
    ASSERT_TRUE(a.has_value());
    ExpectSameFingerprint(*a, Fp(PrintModule(**m)), "printed");
  }
}

// ----------------------------------------- structured printed form
//
// The corpus tests rewrite the printer's output. Rather than edit text with
// regular expressions, they rebuild it from a structure that mirrors the
// printer (checked to reproduce PrintModule byte for byte), edit the
// structure and print it again, plainly or with extra whitespace and
// comments.

struct PAttr {
  std::string name;
  Attribute::Kind kind = Attribute::Kind::kText;
  std::string value;              // kText, kRaw
  std::vector<std::string> refs;  // kComputations, kInstructions
  bool braced = false;
};

struct PInstr {
  const Instruction* ir = nullptr;  // in the module this was built from
  bool root = false;
  std::string name;
  std::string shape;
  std::string opcode;
  bool has_args = false;  // parameter number or literal in `args`
  std::string args;
  std::vector<std::string> operands;
  std::vector<std::string> operand_shapes;  // for the old typed-operand form
  std::vector<PAttr> attrs;
};

struct PComp {
  const Computation* ir = nullptr;
  bool entry = false;
  bool reachable = false;  // from the entry, through called computations
  std::string name;
  std::string signature;  // "(p0: f32[2]) -> f32[2]", informative in HLO text
  std::string thread;
  std::vector<PInstr> instrs;
};

struct PModule {
  std::string name;
  std::optional<std::string> entry_layout;  // "{(...)->...}"
  std::vector<PAttr> attrs;
  std::vector<PComp> comps;
};

PAttr ToPAttr(const Attribute& a) {
  PAttr p;
  p.name = a.name;
  p.kind = a.kind;
  p.value = a.value;
  p.braced = a.braced;
  for (const Computation* c : a.computations) p.refs.push_back(c->name());
  for (const Instruction* i : a.instructions) p.refs.push_back(i->name());
  return p;
}

PModule Structure(const Module& module) {
  PModule pm;
  pm.name = module.name();
  if (const auto& layout = module.entry_layout()) {
    std::string s = "{(";
    for (size_t i = 0; i < layout->parameters.size(); ++i) {
      if (i > 0) s += ", ";
      layout->parameters[i].AppendTo(s);
    }
    s += ")->";
    layout->result.AppendTo(s);
    s += '}';
    pm.entry_layout = std::move(s);
  }
  for (const Attribute& a : module.attributes()) pm.attrs.push_back(ToPAttr(a));

  std::unordered_set<const Computation*> reachable;
  std::vector<const Computation*> stack;
  if (module.entry() != nullptr) {
    reachable.insert(module.entry());
    stack.push_back(module.entry());
  }
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const auto& instr : c->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        if (reachable.insert(callee).second) stack.push_back(callee);
      }
    }
  }

  for (const auto& comp : module.computations()) {
    PComp pc;
    pc.ir = comp.get();
    pc.entry = comp->is_entry();
    pc.reachable = reachable.contains(comp.get());
    pc.name = comp->name();
    pc.thread = comp->execution_thread();
    pc.signature = "(";
    for (const Instruction* p : comp->parameters()) {
      if (p == nullptr) continue;
      if (pc.signature.size() > 1) pc.signature += ", ";
      pc.signature += "p" + std::to_string(p->parameter_number()) + ": " + p->shape().ToString();
    }
    pc.signature += ") -> ";
    if (comp->root() != nullptr) pc.signature += comp->root()->shape().ToString();
    pc.instrs.reserve(comp->instructions().size());
    for (const auto& instr : comp->instructions()) {
      PInstr pi;
      pi.ir = instr.get();
      pi.root = instr.get() == comp->root();
      pi.name = instr->name();
      instr->shape().AppendTo(pi.shape);
      pi.opcode = instr->OpcodeText();
      if (instr->opcode() == Opcode::kParameter) {
        pi.has_args = true;
        pi.args = std::to_string(instr->parameter_number());
      } else if (instr->opcode() == Opcode::kConstant && instr->literal() != nullptr) {
        pi.has_args = true;
        pi.args = instr->literal()->ValueToString();
      } else {
        for (const Instruction* op : instr->operands()) {
          pi.operands.push_back(op->name());
          pi.operand_shapes.push_back(op->shape().ToString());
        }
      }
      for (const Attribute& a : instr->attributes()) pi.attrs.push_back(ToPAttr(a));
      pc.instrs.push_back(std::move(pi));
    }
    pm.comps.push_back(std::move(pc));
  }
  return pm;
}

// Printing options. `fancy` adds whitespace, newlines and comments wherever
// HLO text allows them, which must not change the key.
// `percent` = false writes names without '%' (valid for the names
// RenameAll gives).
struct Style {
  bool fancy = false;
  bool percent = true;
};

// Adds whitespace after commas outside strings (attribute values, shapes and
// literals); inside brackets a newline too, every other time.
std::string Spread(std::string_view text, bool newlines) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  bool in_string = false;
  int commas = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    out.push_back(c);
    if (in_string) {
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      out += (newlines && (++commas % 2 == 0)) ? "\n          " : "  ";
    }
  }
  return out;
}

void EmitAttr(const PAttr& a, const Style& style, std::string& out) {
  out += a.name;
  out += '=';
  switch (a.kind) {
    case Attribute::Kind::kText:
    case Attribute::Kind::kRaw:
      out += style.fancy ? Spread(a.value, /*newlines=*/true) : a.value;
      return;
    case Attribute::Kind::kComputations:
    case Attribute::Kind::kInstructions: {
      if (a.braced) out += style.fancy ? "{ " : "{";
      for (size_t i = 0; i < a.refs.size(); ++i) {
        if (i > 0) out += style.fancy ? " ,\n   " : ", ";
        if (style.percent) out += '%';
        out += a.refs[i];
      }
      if (a.braced) out += style.fancy ? " }" : "}";
      return;
    }
  }
}

void EmitInstr(const PInstr& in, const Style& style, std::string& out) {
  const bool f = style.fancy;
  out += f ? "    " : "  ";
  if (in.root) out += f ? "ROOT   " : "ROOT ";
  if (style.percent) out += '%';
  out += in.name;
  out += f ? "  =  /* shape */ " : " = ";
  out += f ? Spread(in.shape, false) : in.shape;
  out += f ? "   " : " ";
  out += in.opcode;
  out += f ? "( " : "(";
  if (in.has_args) {
    out += f ? Spread(in.args, true) : in.args;
  } else {
    for (size_t i = 0; i < in.operands.size(); ++i) {
      if (i > 0) out += f ? " ,\n        /* operand */ " : ", ";
      // The old form with each operand's shape before its name.
      // (Not for buffer shapes "b(...)": the parser reads "b(" there as a
      // nested instruction.)
      if (f && i < in.operand_shapes.size() && !in.operand_shapes[i].starts_with("b(")) {
        out += in.operand_shapes[i] + " ";
      }
      if (style.percent) out += '%';
      out += in.operands[i];
    }
  }
  out += f ? " )" : ")";
  for (const PAttr& a : in.attrs) {
    out += f ? ",\n        " : ", ";
    EmitAttr(a, style, out);
  }
  if (f) out += "  // end of instruction";
  out += '\n';
}

std::string Emit(const PModule& pm, const Style& style = {}) {
  const bool f = style.fancy;
  std::string out;
  if (f) out += "// a comment before the header\n/* and a\n   block comment */\n";
  out += f ? "HloModule   " : "HloModule ";
  out += pm.name;
  if (pm.entry_layout) {
    out += f ? " ,\n    entry_computation_layout=" : ", entry_computation_layout=";
    out += f ? Spread(*pm.entry_layout, false) : *pm.entry_layout;
  }
  for (const PAttr& a : pm.attrs) {
    out += f ? " , /* header */  " : ", ";
    EmitAttr(a, style, out);
  }
  out += "\n";
  for (const PComp& c : pm.comps) {
    out += f ? "\n\n// computation\n" : "\n";
    if (c.entry) out += f ? "ENTRY   " : "ENTRY ";
    if (style.percent) out += '%';
    out += c.name;
    if (f) out += "  " + c.signature;
    out += f ? "   {   /* body */\n" : " {\n";
    for (const PInstr& in : c.instrs) {
      if (f && in.root) out += "\n  // the root\n";
      EmitInstr(in, style, out);
    }
    out += f ? "  }" : "}";
    if (!c.thread.empty()) {
      out += f ? " ,  execution_thread=\"" : ", execution_thread=\"";
      out += c.thread;
      out += '"';
    }
    out += "\n";
  }
  return out;
}

// ------------------------------------------------ invariant rewrites

// Renames every instruction, every computation and the module, injectively
// and consistently, to names in a random order.
void RenameAll(PModule& pm, std::mt19937_64& rng) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto note = [&](const std::string& n) {
    if (seen.insert(n).second) names.push_back(n);
  };
  for (const PComp& c : pm.comps) {
    note(c.name);
    for (const PInstr& in : c.instrs) note(in.name);
  }
  std::shuffle(names.begin(), names.end(), rng);
  std::unordered_map<std::string, std::string> fresh;
  fresh.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) fresh[names[i]] = "n" + std::to_string(i) + ".r";
  auto rename = [&](std::string& n) {
    auto it = fresh.find(n);
    ASSERT_NE(it, fresh.end()) << n;
    n = it->second;
  };
  pm.name = "renamed_module";
  for (PComp& c : pm.comps) {
    rename(c.name);
    for (PInstr& in : c.instrs) {
      rename(in.name);
      for (std::string& op : in.operands) rename(op);
      for (PAttr& a : in.attrs) {
        for (std::string& r : a.refs) rename(r);
      }
    }
  }
}

// Drops metadata, statistics and origin everywhere. Returns how many.
int DropNonSemantic(PModule& pm) {
  int dropped = 0;
  auto drop = [&](std::vector<PAttr>& attrs) {
    size_t before = attrs.size();
    std::erase_if(attrs, [](const PAttr& a) { return IsNonSemanticAttribute(a.name); });
    dropped += static_cast<int>(before - attrs.size());
  };
  drop(pm.attrs);
  for (PComp& c : pm.comps) {
    for (PInstr& in : c.instrs) drop(in.attrs);
  }
  return dropped;
}

bool Uses(const PInstr& user, const std::string& name) {
  for (const std::string& op : user.operands) {
    if (op == name) return true;
  }
  for (const PAttr& a : user.attrs) {
    if (a.kind != Attribute::Kind::kInstructions) continue;
    for (const std::string& r : a.refs) {
      if (r == name) return true;
    }
  }
  return false;
}

// Swaps up to `max_swaps` pairs of adjacent instructions where neither uses
// the other (the ROOT marker moves with its instruction). Returns the count.
int SwapAdjacentIndependent(PModule& pm, std::mt19937_64& rng, int max_swaps) {
  std::vector<std::pair<size_t, size_t>> sites;
  for (size_t c = 0; c < pm.comps.size(); ++c) {
    for (size_t i = 0; i + 1 < pm.comps[c].instrs.size(); ++i) sites.emplace_back(c, i);
  }
  std::shuffle(sites.begin(), sites.end(), rng);
  int swaps = 0;
  for (auto [c, i] : sites) {
    if (swaps >= max_swaps) break;
    auto& instrs = pm.comps[c].instrs;
    if (Uses(instrs[i + 1], instrs[i].name) || Uses(instrs[i], instrs[i + 1].name)) continue;
    std::swap(instrs[i], instrs[i + 1]);
    ++swaps;
  }
  return swaps;
}

// Rewrites every computation in a random topological order of its operand
// and control edges. Returns how many instructions moved.
int ShuffleTopologically(PModule& pm, std::mt19937_64& rng) {
  int moved = 0;
  for (PComp& c : pm.comps) {
    const size_t n = c.instrs.size();
    std::unordered_map<std::string_view, size_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) index.emplace(c.instrs[i].name, i);
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::vector<size_t> deps;
      for (const std::string& op : c.instrs[i].operands) deps.push_back(index.at(op));
      for (const PAttr& a : c.instrs[i].attrs) {
        if (a.kind != Attribute::Kind::kInstructions) continue;
        for (const std::string& r : a.refs) deps.push_back(index.at(r));
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      pending[i] = deps.size();
      for (size_t d : deps) users[d].push_back(i);
    }
    std::vector<size_t> ready;
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push_back(i);
    }
    std::vector<PInstr> order;
    order.reserve(n);
    while (!ready.empty()) {
      size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
      std::swap(ready[pick], ready.back());
      size_t i = ready.back();
      ready.pop_back();
      if (i != order.size()) ++moved;
      for (size_t u : users[i]) {
        if (--pending[u] == 0) ready.push_back(u);
      }
      order.push_back(std::move(c.instrs[i]));
    }
    if (order.size() != n) {
      ADD_FAILURE() << "cycle in computation %" << c.name;
      return moved;
    }
    c.instrs = std::move(order);
  }
  return moved;
}

// Gives every distinct channel id a new number (consistently, in reverse
// order of first use). Returns how many attributes were rewritten.
int RenumberChannelIds(PModule& pm) {
  std::vector<std::string> distinct;
  std::unordered_map<std::string, size_t> slot;
  auto for_each = [&](auto&& fn) {
    for (PComp& c : pm.comps) {
      for (PInstr& in : c.instrs) {
        for (PAttr& a : in.attrs) {
          if (a.name == "channel_id" && a.kind == Attribute::Kind::kText) fn(a);
        }
      }
    }
  };
  for_each([&](PAttr& a) {
    if (slot.emplace(a.value, distinct.size()).second) distinct.push_back(a.value);
  });
  int rewritten = 0;
  for_each([&](PAttr& a) {
    a.value = std::to_string(1000 + 7 * (distinct.size() - slot.at(a.value)));
    ++rewritten;
  });
  return rewritten;
}

// Shuffles the attributes of every instruction and of the header.
int ShuffleAttributes(PModule& pm, std::mt19937_64& rng) {
  int shuffled = 0;
  auto shuffle = [&](std::vector<PAttr>& attrs) {
    if (attrs.size() < 2) return;
    std::shuffle(attrs.begin(), attrs.end(), rng);
    ++shuffled;
  };
  shuffle(pm.attrs);
  for (PComp& c : pm.comps) {
    for (PInstr& in : c.instrs) shuffle(in.attrs);
  }
  return shuffled;
}

// Puts the computations in a random order that still defines callees
// before callers. Returns how many moved.
int ShuffleComputations(PModule& pm, std::mt19937_64& rng) {
  const size_t n = pm.comps.size();
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(pm.comps[i].name, i);
  std::vector<std::vector<size_t>> callers(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> callees;
    for (const PInstr& in : pm.comps[i].instrs) {
      for (const PAttr& a : in.attrs) {
        if (a.kind != Attribute::Kind::kComputations) continue;
        for (const std::string& r : a.refs) callees.insert(index.at(r));
      }
    }
    pending[i] = callees.size();
    for (size_t c : callees) callers[c].push_back(i);
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<PComp> order;
  int moved = 0;
  while (!ready.empty()) {
    size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
    std::swap(ready[pick], ready.back());
    size_t i = ready.back();
    ready.pop_back();
    if (i != order.size()) ++moved;
    for (size_t u : callers[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
    order.push_back(std::move(pm.comps[i]));
  }
  if (order.size() != n) {
    ADD_FAILURE() << "call graph has a cycle";
    return moved;
  }
  pm.comps = std::move(order);
  return moved;
}

// ------------------------------------------------------------ corpus

struct CorpusModule {
  std::string path;  // relative to the corpus root
  size_t bytes = 0;
  std::unique_ptr<Module> module;
  Fingerprint fp;
};

struct Corpus {
  std::vector<CorpusModule> modules;  // those that parse and fingerprint
  std::vector<std::string> unparsed;  // "path: error"
  size_t files = 0;
};

// Below this, a module is checked fully; above, the expensive mutations are
// limited (the corpus has a few 3-4 MB modules).
constexpr size_t kLargeModuleBytes = 1 << 20;
constexpr size_t kMinCorpusModules = 690;

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    namespace fs = std::filesystem;
    fs::path root = fs::path(KILN_CORPUS_DIR) / "hlo";
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(root, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".hlo") files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
    c->files = files.size();
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string rel = fs::relative(p, KILN_CORPUS_DIR).string();
      Result<std::unique_ptr<Module>> m = ParseModule(text, rel);
      if (!m) {
        c->unparsed.push_back(rel + ": " + m.error().message);
        continue;
      }
      Result<Fingerprint> fp = FingerprintModule(**m, {});
      if (!fp) {
        c->unparsed.push_back(rel + ": fingerprint: " + fp.error().message);
        continue;
      }
      c->modules.push_back({rel, text.size(), std::move(*m), std::move(*fp)});
    }
    return c;
  }();
  return *corpus;
}

void CheckCorpusSize(const Corpus& corpus) {
  ASSERT_GE(corpus.modules.size(), kMinCorpusModules)
      << "corpus at " << KILN_CORPUS_DIR << ": " << corpus.files << " .hlo files, "
      << corpus.unparsed.size() << " did not parse"
      << (corpus.unparsed.empty() ? "" : "; first: " + corpus.unparsed.front());
}

uint64_t SeedFor(const std::string& path, uint64_t salt) {
  return std::hash<std::string>{}(path) ^ (salt * 0x9e3779b97f4a7c15ULL);
}

// Fingerprint of text that must parse; failures are reported against `what`.
std::optional<Fingerprint> MustFingerprint(const std::string& text, const std::string& what) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, what);
  if (!m) {
    ADD_FAILURE() << what << ": rewritten text does not parse: " << m.error().message;
    return std::nullopt;
  }
  Result<Fingerprint> fp = FingerprintModule(**m, {});
  if (!fp) {
    ADD_FAILURE() << what << ": fingerprint failed: " << fp.error().message;
    return std::nullopt;
  }
  return std::move(*fp);
}

// Runs `rewrite` on the structured form of every corpus module and checks
// that the printed result has the original fingerprint. `rewrite` returns how
// many edits it made (for the report).
template <typename Rewrite>
void CheckInvariance(const char* what, Rewrite rewrite, Style style = {}) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  size_t checked = 0, edited_modules = 0, failures = 0;
  long long edits = 0;
  for (const CorpusModule& cm : corpus.modules) {
    PModule pm = Structure(*cm.module);
    std::mt19937_64 rng(SeedFor(cm.path, std::hash<std::string_view>{}(what)));
    int n = rewrite(pm, rng, cm);
    edits += n;
    if (n > 0) ++edited_modules;
    std::optional<Fingerprint> fp = MustFingerprint(Emit(pm, style), cm.path + " (" + what + ")");
    ++checked;
    if (!fp) {
      ++failures;
      continue;
    }
    if (fp->key != cm.fp.key) ++failures;
    ExpectSameFingerprint(cm.fp, *fp, cm.path + ": " + what + " changed the fingerprint");
    if (failures > 20) {
      FAIL() << "too many failures; stopping";
    }
  }
  std::cout << "[ invariance ] " << what << ": " << checked << " modules checked, "
            << edited_modules << " edited, " << edits << " edits, " << failures
            << " key changes\n";
  EXPECT_GE(checked, kMinCorpusModules);
}

TEST(FingerprintCorpusTest, PrintedFormReproducesPrinterAndKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  std::cout << "[ corpus ] " << corpus.files << " files, " << corpus.modules.size()
            << " parse and fingerprint, " << corpus.unparsed.size() << " skipped\n";
  for (const std::string& u : corpus.unparsed) std::cout << "  skipped " << u.substr(0, 200) << "\n";
  size_t checked = 0;
  for (const CorpusModule& cm : corpus.modules) {
    // The test's own printer must agree with PrintModule, or the rewrites
    // below would test something else.
    std::string printed = PrintModule(*cm.module);
    ASSERT_EQ(Emit(Structure(*cm.module)), printed) << cm.path;
    std::optional<Fingerprint> fp = MustFingerprint(printed, cm.path);
    if (fp) ExpectSameFingerprint(cm.fp, *fp, cm.path + ": printing changed the fingerprint");
    ++checked;
  }
  EXPECT_GE(checked, kMinCorpusModules);
}

TEST(FingerprintCorpusTest, RenamingInstructionsAndComputationsKeepsKey) {
  CheckInvariance("rename", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    RenameAll(pm, rng);
    return 1;
  });
}

TEST(FingerprintCorpusTest, DroppingMetadataKeepsKey) {
  CheckInvariance("drop metadata/statistics/origin",
                  [](PModule& pm, std::mt19937_64&, const CorpusModule&) {
                    return DropNonSemantic(pm);
                  });
}

TEST(FingerprintCorpusTest, SwappingAdjacentIndependentInstructionsKeepsKey) {
  CheckInvariance("swap adjacent independent instructions",
                  [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
                    return SwapAdjacentIndependent(pm, rng, 12);
                  });
}

TEST(FingerprintCorpusTest, RandomTopologicalOrderKeepsKey) {
  CheckInvariance("random topological order",
                  [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
                    return ShuffleTopologically(pm, rng);
                  });
}

TEST(FingerprintCorpusTest, WhitespaceAndCommentsKeepKey) {
  CheckInvariance(
      "whitespace and comments",
      [](PModule&, std::mt19937_64&, const CorpusModule&) { return 1; }, Style{.fancy = true});
}

TEST(FingerprintCorpusTest, RenumberingChannelIdsKeepsKey) {
  CheckInvariance("renumber channel ids", [](PModule& pm, std::mt19937_64&, const CorpusModule&) {
    return RenumberChannelIds(pm);
  });
}

TEST(FingerprintCorpusTest, ShufflingAttributesKeepsKey) {
  CheckInvariance("shuffle attribute order", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    return ShuffleAttributes(pm, rng);
  });
}

TEST(FingerprintCorpusTest, ReorderingComputationsKeepsKey) {
  CheckInvariance("reorder computations", [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
    return ShuffleComputations(pm, rng);
  });
}

TEST(FingerprintCorpusTest, AllInvariantRewritesTogetherKeepKey) {
  // Also without '%' before names, which HLO text allows.
  CheckInvariance(
      "all rewrites together",
      [](PModule& pm, std::mt19937_64& rng, const CorpusModule&) {
        int n = RenumberChannelIds(pm) + DropNonSemantic(pm) + ShuffleAttributes(pm, rng);
        n += ShuffleTopologically(pm, rng) + ShuffleComputations(pm, rng);
        RenameAll(pm, rng);
        return n + 1;
      },
      Style{.fancy = true, .percent = false});
}

// ------------------------------------------------------- mutations

enum MutationKind {
  // Of one instruction (or two, for kParameterNumber).
  kDimension,
  kElementType,
  kLayout,
  kAttributeValue,
  kComparisonDirection,
  kOpcodeChange,
  kConstantValue,
  kOperandOrder,
  kParameterNumber,
  kCalledComputation,
  kBackendConfig,
  kNumInstructionMutations,
  // Of the module header.
  kModuleAttribute,
  kEntryLayout,
  kNumMutations,
};

constexpr const char* kMutationNames[] = {
    "dimension", "element type", "layout", "attribute value", "comparison direction",
    "opcode", "constant value", "operand order", "parameter number", "called computation",
    "backend_config", "", "module attribute", "entry layout",
};

// Each kind must be applied at least this often over the corpus.
constexpr long long kMinApplied[] = {
    /*dimension=*/1000, /*element type=*/1000, /*layout=*/600, /*attribute value=*/400,
    /*comparison direction=*/100, /*opcode=*/300, /*constant value=*/250,
    /*operand order=*/120, /*parameter number=*/300, /*called computation=*/80,
    /*backend_config=*/25, 0, /*module attribute=*/50, /*entry layout=*/80};

// An array leaf of a shape's text: "f32[2,<=3]{0,1}".
struct ArrayLeaf {
  size_t type_begin = 0;
  size_t lsq = 0, rsq = 0;  // '[' and ']'
  size_t layout_begin = std::string::npos, layout_end = std::string::npos;  // '{' .. '}'
  int rank = 0;
};

bool IsTypeChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::vector<ArrayLeaf> ArrayLeaves(const std::string& s) {
  std::vector<ArrayLeaf> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '[') continue;
    ArrayLeaf leaf;
    leaf.lsq = i;
    leaf.type_begin = i;
    while (leaf.type_begin > 0 && IsTypeChar(s[leaf.type_begin - 1])) --leaf.type_begin;
    leaf.rsq = s.find(']', i);
    if (leaf.rsq == std::string::npos || leaf.type_begin == i) continue;
    leaf.rank = leaf.rsq == i + 1 ? 0 : 1 + static_cast<int>(std::count(s.begin() + i, s.begin() + leaf.rsq, ','));
    if (leaf.rsq + 1 < s.size() && s[leaf.rsq + 1] == '{') {
      leaf.layout_begin = leaf.rsq + 1;
      leaf.layout_end = s.find('}', leaf.layout_begin);
    }
    out.push_back(leaf);
    i = leaf.rsq;
  }
  return out;
}

template <typename T>
const T& Pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// One dimension (or bound) of one array leaf, plus one.
std::optional<std::string> MutateDimension(const std::string& shape, std::mt19937_64& rng) {
  std::vector<std::pair<size_t, size_t>> numbers;  // [begin, end) of digit runs in [...]
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    for (size_t i = leaf.lsq + 1; i < leaf.rsq; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(shape[i]))) continue;
      size_t j = i;
      while (j < leaf.rsq && std::isdigit(static_cast<unsigned char>(shape[j]))) ++j;
      numbers.emplace_back(i, j);
      i = j;
    }
  }
  if (numbers.empty()) return std::nullopt;
  auto [b, e] = Pick(numbers, rng);
  std::string out = shape;
  out.replace(b, e - b, std::to_string(std::stoll(shape.substr(b, e - b)) + 1));
  return out;
}

std::optional<std::string> OtherElementType(std::string_view t) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"pred", "s8"},   {"s8", "s16"},   {"s16", "s32"},       {"s32", "s64"},
      {"s64", "s32"},   {"u8", "u16"},   {"u16", "u32"},       {"u32", "u64"},
      {"u64", "u32"},   {"f16", "f32"},  {"bf16", "f32"},      {"f32", "f16"},
      {"f64", "f32"},   {"c64", "c128"}, {"c128", "c64"},      {"s4", "s8"},
      {"u4", "u8"},     {"f8e4m3fn", "f8e5m2"}, {"f8e5m2", "f8e4m3fn"},
  };
  auto it = kOther.find(t);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

std::optional<std::string> MutateElementType(const std::string& shape, std::mt19937_64& rng) {
  std::vector<ArrayLeaf> leaves;
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    if (OtherElementType(std::string_view(shape).substr(leaf.type_begin, leaf.lsq - leaf.type_begin))) {
      leaves.push_back(leaf);
    }
  }
  if (leaves.empty()) return std::nullopt;
  const ArrayLeaf& leaf = Pick(leaves, rng);
  std::string out = shape;
  out.replace(leaf.type_begin, leaf.lsq - leaf.type_begin,
              *OtherElementType(std::string_view(shape).substr(leaf.type_begin, leaf.lsq - leaf.type_begin)));
  return out;
}

// A rank >= 2 leaf gets a non-default minor_to_major: {0,1,...} where none
// was printed (the default), else its first two entries swapped.
std::optional<std::string> MutateLayout(const std::string& shape, std::mt19937_64& rng) {
  std::vector<ArrayLeaf> leaves;
  for (const ArrayLeaf& leaf : ArrayLeaves(shape)) {
    if (leaf.rank >= 2 && (leaf.layout_begin == std::string::npos || leaf.layout_end != std::string::npos)) {
      leaves.push_back(leaf);
    }
  }
  if (leaves.empty()) return std::nullopt;
  const ArrayLeaf& leaf = Pick(leaves, rng);
  std::string out = shape;
  if (leaf.layout_begin == std::string::npos) {
    std::string layout = "{";
    for (int i = 0; i < leaf.rank; ++i) layout += (i > 0 ? "," : "") + std::to_string(i);
    out.insert(leaf.rsq + 1, layout + "}");
    return out;
  }
  std::string inner = shape.substr(leaf.layout_begin + 1, leaf.layout_end - leaf.layout_begin - 1);
  size_t colon = inner.find(':');
  std::string dims = inner.substr(0, colon);
  size_t comma = dims.find(',');
  if (comma == std::string::npos) return std::nullopt;
  size_t comma2 = dims.find(',', comma + 1);
  std::string first = dims.substr(0, comma);
  std::string second = dims.substr(comma + 1, comma2 == std::string::npos ? std::string::npos : comma2 - comma - 1);
  std::string swapped = second + "," + first + (comma2 == std::string::npos ? "" : dims.substr(comma2));
  out.replace(leaf.layout_begin + 1, dims.size(), swapped);
  return out;
}

// Attributes whose digits are semantic (and kept as text).
bool IsNumericSemanticAttribute(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "dimensions", "index", "slice", "dynamic_slice_sizes", "iota_dimension", "padding",
      "window", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
      "rhs_batch_dims", "dim_labels", "feature_group_count", "batch_group_count",
      "feature_index", "offset_dims", "collapsed_slice_dims", "start_index_map",
      "index_vector_dim", "slice_sizes", "update_window_dims", "inserted_window_dims",
      "scatter_dims_to_operand_dims", "replica_groups", "exponent_bits", "mantissa_bits",
      "fft_length", "epsilon", "source_target_pairs", "split_dimension",
      "concat_dimension", "split_count", "sharding", "output_to_operand_aliasing",
      "operand_batching_dims", "start_indices_batching_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "k", "largest", "tuple_index", "distribution"};
  return kNames.contains(name);
}

// Plus one on a random digit run (outside strings unless inside_strings).
std::optional<std::string> MutateNumberInValue(const std::string& value, std::mt19937_64& rng,
                                               bool inside_strings = false) {
  std::vector<std::pair<size_t, size_t>> numbers;
  bool in_string = false;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (in_string && !inside_strings) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) continue;
    size_t j = i;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
    if (j - i <= 15) numbers.emplace_back(i, j);
    i = j;
  }
  if (numbers.empty()) return std::nullopt;
  auto [b, e] = Pick(numbers, rng);
  std::string out = value;
  out.replace(b, e - b, std::to_string(std::stoll(value.substr(b, e - b)) + 1));
  return out;
}

std::optional<std::string> OtherDirection(std::string_view d) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"LT", "GT"}, {"GT", "LT"}, {"LE", "GE"}, {"GE", "LE"}, {"EQ", "NE"}, {"NE", "EQ"}};
  auto it = kOther.find(d);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

std::optional<std::string> OtherOpcode(std::string_view op) {
  static const std::map<std::string_view, std::string_view> kOther = {
      {"add", "multiply"},       {"multiply", "add"},     {"subtract", "add"},
      {"divide", "multiply"},    {"maximum", "minimum"},  {"minimum", "maximum"},
      {"and", "or"},             {"or", "and"},           {"xor", "or"},
      {"exponential", "log"},    {"log", "exponential"},  {"negate", "abs"},
      {"abs", "negate"},         {"sine", "cosine"},      {"cosine", "sine"},
      {"tanh", "logistic"},      {"logistic", "tanh"},    {"sqrt", "rsqrt"},
      {"rsqrt", "sqrt"},         {"floor", "ceil"},       {"ceil", "floor"},
      {"power", "atan2"},        {"copy", "negate"},      {"not", "negate"},
  };
  auto it = kOther.find(op);
  if (it == kOther.end()) return std::nullopt;
  return std::string(it->second);
}

// A different value for the first element of a constant's literal text:
// true<->false, or the last digit of the first number's integer part moved
// by one ("127" -> "126", "0.5" -> "1.5").
std::optional<std::string> MutateConstant(const std::string& lit) {
  for (size_t i = 0; i < lit.size(); ++i) {
    char c = lit[i];
    char prev = i > 0 ? lit[i - 1] : ' ';
    bool word_start = !std::isalnum(static_cast<unsigned char>(prev)) && prev != '.' && prev != '_';
    if (!word_start) continue;
    if (lit.compare(i, 4, "true") == 0) return lit.substr(0, i) + "false" + lit.substr(i + 4);
    if (lit.compare(i, 5, "false") == 0) return lit.substr(0, i) + "true" + lit.substr(i + 5);
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < lit.size() && std::isdigit(static_cast<unsigned char>(lit[j]))) ++j;
      std::string out = lit;
      char& d = out[j - 1];
      d = d == '0' ? '1' : static_cast<char>(d - 1);
      return out;
    }
  }
  return std::nullopt;
}

bool IsNonCommutative(std::string_view op) {
  static const std::set<std::string_view> kOps = {
      "subtract", "divide", "power", "remainder", "atan2", "compare", "shift-left",
      "shift-right-arithmetic", "shift-right-logical", "concatenate", "complex"};
  return kOps.contains(op);
}

// Two operands that cannot hash alike (a cheap, sufficient test).
bool ObviouslyDifferent(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || !(a->shape() == b->shape())) return true;
  if (a->opcode() == Opcode::kParameter) return a->parameter_number() != b->parameter_number();
  if (a->opcode() == Opcode::kConstant && a->literal() != nullptr && b->literal() != nullptr) {
    return !(*a->literal() == *b->literal()) && !a->literal()->elided();
  }
  return false;
}

// What a mutation may consult besides the instruction.
struct MutationContext {
  PModule pm;
  const CorpusModule& cm;
  std::unordered_map<std::string, Hash128> callee_hash;  // reachable callees by name
  std::vector<std::vector<size_t>> parameters;           // instruction indices, per computation
};

// The instructions a mutation edited, as they were, for undoing it.
using Undo = std::vector<std::pair<size_t, PInstr>>;

// Applies `kind` to instruction i of computation c when it fits (saving what
// it edits in `undo`); false when it does not apply. With dry_run, only
// says whether it would.
bool Mutate(MutationKind kind, MutationContext& ctx, size_t c, size_t i, std::mt19937_64& rng,
            bool dry_run, Undo& undo) {
  PComp& comp = ctx.pm.comps[c];
  PInstr& in = comp.instrs[i];
  std::optional<std::string> s;
  auto edit = [&](size_t j) -> PInstr& {
    undo.emplace_back(j, comp.instrs[j]);
    return comp.instrs[j];
  };
  auto set = [&](std::string PInstr::*field) {
    if (!s) return false;
    if (!dry_run) edit(i).*field = *s;
    return true;
  };
  switch (kind) {
    case kDimension:
      if (in.opcode == "constant") return false;  // the literal would not fit
      s = MutateDimension(in.shape, rng);
      return set(&PInstr::shape);
    case kElementType:
      s = MutateElementType(in.shape, rng);
      return set(&PInstr::shape);
    case kLayout:
      s = MutateLayout(in.shape, rng);
      return set(&PInstr::shape);
    case kAttributeValue:
    case kBackendConfig: {
      std::vector<size_t> attrs;
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        const PAttr& attr = in.attrs[a];
        bool fits = kind == kAttributeValue
                        ? attr.kind == Attribute::Kind::kText && IsNumericSemanticAttribute(attr.name)
                        : attr.kind == Attribute::Kind::kRaw && attr.name == "backend_config";
        if (fits && std::any_of(attr.value.begin(), attr.value.end(), [](char ch) {
              return std::isdigit(static_cast<unsigned char>(ch));
            })) {
          attrs.push_back(a);
        }
      }
      if (attrs.empty()) return false;
      if (dry_run) return true;
      size_t a = Pick(attrs, rng);
      s = MutateNumberInValue(in.attrs[a].value, rng, /*inside_strings=*/kind == kBackendConfig);
      if (!s) return false;
      edit(i).attrs[a].value = *s;
      return true;
    }
    case kComparisonDirection:
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        if (in.attrs[a].name == "direction" && (s = OtherDirection(in.attrs[a].value))) {
          if (!dry_run) edit(i).attrs[a].value = *s;
          return true;
        }
      }
      return false;
    case kOpcodeChange:
      s = OtherOpcode(in.opcode);
      return set(&PInstr::opcode);
    case kConstantValue:
      if (in.opcode != "constant" || !in.has_args) return false;
      s = MutateConstant(in.args);
      return set(&PInstr::args);
    case kOperandOrder:
      if (!IsNonCommutative(in.opcode) || in.operands.size() != 2 ||
          in.operands[0] == in.operands[1] ||
          !ObviouslyDifferent(in.ir->operand(0), in.ir->operand(1))) {
        return false;
      }
      if (!dry_run) std::swap(edit(i).operands[0], edit(i).operands[1]);
      return true;
    case kParameterNumber: {
      // Swap the numbers of two parameters of different shapes.
      if (in.opcode != "parameter") return false;
      std::vector<size_t> partners;
      for (size_t j : ctx.parameters[c]) {
        if (j != i && !(comp.instrs[j].ir->shape() == in.ir->shape())) {
          partners.push_back(j);
          if (dry_run) return true;
        }
      }
      if (partners.empty()) return false;
      if (dry_run) return true;
      size_t j = Pick(partners, rng);
      std::string a = in.args, b = comp.instrs[j].args;
      edit(i).args = b;
      edit(j).args = a;
      return true;
    }
    case kCalledComputation: {
      // Another reachable computation of different content, defined before
      // this one (callees come first in HLO text).
      std::vector<std::pair<size_t, size_t>> refs;  // (attribute, ref)
      for (size_t a = 0; a < in.attrs.size(); ++a) {
        if (in.attrs[a].kind != Attribute::Kind::kComputations) continue;
        for (size_t r = 0; r < in.attrs[a].refs.size(); ++r) refs.emplace_back(a, r);
      }
      std::vector<std::pair<std::pair<size_t, size_t>, std::string>> options;
      for (auto [a, r] : refs) {
        auto current = ctx.callee_hash.find(in.attrs[a].refs[r]);
        if (current == ctx.callee_hash.end()) continue;
        for (size_t k = 0; k < c; ++k) {
          const PComp& other = ctx.pm.comps[k];
          auto h = ctx.callee_hash.find(other.name);
          if (h != ctx.callee_hash.end() && h->second != current->second) {
            options.push_back({{a, r}, other.name});
            if (dry_run) return true;
          }
        }
      }
      if (options.empty()) return false;
      const auto& [where, callee] = Pick(options, rng);
      edit(i).attrs[where.first].refs[where.second] = callee;
      return true;
    }
    case kNumInstructionMutations:
    default:
      break;
  }
  return false;
}

// Module-level mutations: a header attribute or the entry layout.
bool MutateHeader(MutationKind kind, PModule& pm, std::mt19937_64& rng) {
  if (kind == kEntryLayout) {
    if (!pm.entry_layout) return false;
    std::optional<std::string> s = MutateLayout(*pm.entry_layout, rng);
    if (!s) s = MutateDimension(*pm.entry_layout, rng);
    if (!s) return false;
    pm.entry_layout = *s;
    return true;
  }
  std::vector<size_t> attrs;
  for (size_t a = 0; a < pm.attrs.size(); ++a) {
    const PAttr& attr = pm.attrs[a];
    if (IsNonSemanticAttribute(attr.name) || attr.kind == Attribute::Kind::kComputations) continue;
    bool digits = std::any_of(attr.value.begin(), attr.value.end(),
                              [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (digits || attr.value.find("true") != std::string::npos ||
        attr.value.find("false") != std::string::npos) {
      attrs.push_back(a);
    }
  }
  if (attrs.empty()) return false;
  PAttr& attr = pm.attrs[Pick(attrs, rng)];
  std::optional<std::string> s = MutateNumberInValue(attr.value, rng, /*inside_strings=*/true);
  if (!s) {
    size_t t = attr.value.find("true");
    size_t f = attr.value.find("false");
    if (t != std::string::npos && (f == std::string::npos || t < f)) {
      s = attr.value.substr(0, t) + "false" + attr.value.substr(t + 4);
    } else {
      s = attr.value.substr(0, f) + "true" + attr.value.substr(f + 5);
    }
  }
  attr.value = *s;
  return true;
}

struct MutationCounts {
  long long applied[kNumMutations] = {};
  long long skipped[kNumMutations] = {};  // mutated text did not parse
  long long noop[kNumMutations] = {};     // parsed to the same value
};

// Names of the computations that call `target`, directly or through others.
using CallerCache = std::unordered_map<const Computation*, std::unordered_set<std::string>>;
const std::unordered_set<std::string>& CallersOf(const Module& module, const Computation* target,
                                                 CallerCache& cache) {
  auto [it, inserted] = cache.try_emplace(target);
  if (!inserted) return it->second;
  std::unordered_map<const Computation*, std::vector<const Computation*>> callers;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        callers[callee].push_back(comp.get());
      }
    }
  }
  std::unordered_set<const Computation*> seen = {target};
  std::vector<const Computation*> stack = {target};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const Computation* caller : callers[c]) {
      if (seen.insert(caller).second) {
        it->second.insert(caller->name());
        stack.push_back(caller);
      }
    }
  }
  return it->second;
}

std::string InstrText(const PInstr& in) {
  std::string out;
  EmitInstr(in, {}, out);
  return out.size() > 400 ? out.substr(0, 400) + "...\n" : out;
}

// Checks the sub-hashes after a mutation of instruction i of computation c:
// the computation and its callers change, nothing else; an entry parameter
// whose shape or number changed changes its parameter hash only.
void CheckSubHashes(const CorpusModule& cm, const PModule& pm, MutationKind kind, size_t c,
                    const Undo& undo, const Fingerprint& fp, CallerCache& caller_cache,
                    const std::string& site) {
  EXPECT_EQ(fp.options, cm.fp.options) << site;
  EXPECT_EQ(fp.target, cm.fp.target) << site;
  EXPECT_EQ(fp.module_config, cm.fp.module_config) << site;
  EXPECT_NE(fp.entry_body, cm.fp.entry_body) << site;
  if (kind == kCalledComputation) return;  // the set of reachable callees changes
  const PComp& comp = pm.comps[c];
  if (comp.entry) {
    EXPECT_EQ(CalledHashes(fp), CalledHashes(cm.fp)) << site;
    ASSERT_EQ(fp.parameter_shapes.size(), cm.fp.parameter_shapes.size()) << site;
    std::set<int64_t> changed_params;
    const bool shape_kind = kind == kDimension || kind == kElementType || kind == kLayout;
    for (const auto& [j, saved] : undo) {
      if (saved.ir->opcode() != Opcode::kParameter) continue;
      if (shape_kind || kind == kParameterNumber) changed_params.insert(saved.ir->parameter_number());
    }
    for (size_t p = 0; p < fp.parameter_shapes.size(); ++p) {
      EXPECT_EQ(changed_params.contains(static_cast<int64_t>(p)),
                fp.parameter_shapes[p] != cm.fp.parameter_shapes[p])
          << site << "\n  parameter " << p;
    }
    return;
  }
  EXPECT_EQ(fp.parameter_shapes, cm.fp.parameter_shapes) << site;
  ASSERT_EQ(fp.called_computations.size(), cm.fp.called_computations.size()) << site;
  const std::unordered_set<std::string>& callers = CallersOf(*cm.module, comp.ir, caller_cache);
  for (size_t j = 0; j < fp.called_computations.size(); ++j) {
    const std::string& name = fp.called_computations[j].name;
    const bool should_change = name == comp.name || callers.contains(name);
    EXPECT_EQ(should_change, fp.called_computations[j].hash != cm.fp.called_computations[j].hash)
        << site << "\n  called computation %" << name;
  }
}

// Mutates up to `per_kind` random sites of each kind (in computations
// reachable from the entry) of one module; every key must differ from the
// original and the sub-hashes move as they should.
void MutateModule(const CorpusModule& cm, int per_kind, MutationCounts& counts, int& failures) {
  MutationContext ctx{Structure(*cm.module), cm, {}, {}};
  PModule& pm = ctx.pm;
  for (const CalledComputationHash& h : cm.fp.called_computations) ctx.callee_hash[h.name] = h.hash;
  ctx.parameters.resize(pm.comps.size());
  for (size_t c = 0; c < pm.comps.size(); ++c) {
    for (size_t i = 0; i < pm.comps[c].instrs.size(); ++i) {
      if (pm.comps[c].instrs[i].opcode == "parameter") ctx.parameters[c].push_back(i);
    }
  }
  std::mt19937_64 rng(SeedFor(cm.path, 77));
  CallerCache caller_cache;

  // Parses and fingerprints mutated text; nullopt (counted) if it does not parse.
  auto reparse = [&](int k, std::unique_ptr<Module>* out) -> std::optional<Fingerprint> {
    Result<std::unique_ptr<Module>> m = ParseModule(Emit(pm), cm.path);
    if (!m) {
      ++counts.skipped[k];
      return std::nullopt;
    }
    Result<Fingerprint> fp = FingerprintModule(**m, {});
    if (!fp) {
      ++counts.skipped[k];
      return std::nullopt;
    }
    *out = std::move(*m);
    return std::move(*fp);
  };

  for (int k = 0; k < kNumInstructionMutations; ++k) {
    const MutationKind kind = static_cast<MutationKind>(k);
    std::vector<std::pair<size_t, size_t>> sites;
    Undo none;
    for (size_t c = 0; c < pm.comps.size(); ++c) {
      if (!pm.comps[c].reachable) continue;
      for (size_t i = 0; i < pm.comps[c].instrs.size(); ++i) {
        std::mt19937_64 probe_rng(1);
        if (Mutate(kind, ctx, c, i, probe_rng, /*dry_run=*/true, none)) sites.emplace_back(c, i);
      }
    }
    std::shuffle(sites.begin(), sites.end(), rng);
    int applied = 0, attempts = 0;
    for (auto [c, i] : sites) {
      if (applied >= per_kind || attempts >= 3 * per_kind) break;
      ++attempts;
      Undo undo;
      if (!Mutate(kind, ctx, c, i, rng, /*dry_run=*/false, undo)) continue;
      std::string site = cm.path + ": " + kMutationNames[k] + " in %" + pm.comps[c].name;
      for (const auto& [j, saved] : undo) {
        site += "\n  before: " + InstrText(saved) + "  after:  " + InstrText(pm.comps[c].instrs[j]);
      }
      std::unique_ptr<Module> mutated;
      std::optional<Fingerprint> fp = reparse(k, &mutated);
      for (auto it = undo.rbegin(); it != undo.rend(); ++it) pm.comps[c].instrs[it->first] = it->second;
      if (!fp) continue;
      if (kind == kConstantValue) {
        const Instruction* now = mutated->computations()[c]->instructions()[i].get();
        if (now->literal() != nullptr && *now->literal() == *pm.comps[c].instrs[i].ir->literal()) {
          ++counts.noop[k];  // e.g. rounded to the same f16 value
          continue;
        }
      }
      ++applied;
      ++counts.applied[k];
      if (fp->key == cm.fp.key) {
        ++failures;
        ADD_FAILURE() << "key did not change: " << site;
        continue;
      }
      CheckSubHashes(cm, pm, kind, c, undo, *fp, caller_cache, site);
    }
  }

  for (int k = kNumInstructionMutations + 1; k < kNumMutations; ++k) {
    const MutationKind kind = static_cast<MutationKind>(k);
    const std::optional<std::string> saved_layout = pm.entry_layout;
    const std::vector<PAttr> saved_attrs = pm.attrs;
    if (!MutateHeader(kind, pm, rng)) continue;
    std::string site = cm.path + ": " + kMutationNames[k];
    std::unique_ptr<Module> mutated;
    std::optional<Fingerprint> fp = reparse(k, &mutated);
    pm.entry_layout = saved_layout;
    pm.attrs = saved_attrs;
    if (!fp) continue;
    ++counts.applied[k];
    if (fp->key == cm.fp.key) {
      ++failures;
      ADD_FAILURE() << "key did not change: " << site;
      continue;
    }
    EXPECT_NE(fp->module_config, cm.fp.module_config) << site;
    EXPECT_EQ(fp->entry_body, cm.fp.entry_body) << site;
    EXPECT_EQ(fp->parameter_shapes, cm.fp.parameter_shapes) << site;
  }
}

TEST(FingerprintCorpusTest, MutationsChangeKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  MutationCounts counts;
  int failures = 0;
  size_t checked = 0;
  for (const CorpusModule& cm : corpus.modules) {
    MutateModule(cm, cm.bytes > kLargeModuleBytes ? 1 : 4, counts, failures);
    ++checked;
    if (failures > 20) FAIL() << "too many keys did not change; stopping";
  }
  std::cout << "[ sensitivity ] " << checked << " modules\n";
  std::cout << "  " << std::left << std::setw(22) << "mutation" << std::right << std::setw(9)
            << "applied" << std::setw(13) << "not parsed" << std::setw(8) << "no-op" << "\n";
  long long total = 0;
  for (int k = 0; k < kNumMutations; ++k) {
    if (k == kNumInstructionMutations) continue;
    std::cout << "  " << std::left << std::setw(22) << kMutationNames[k] << std::right
              << std::setw(9) << counts.applied[k] << std::setw(13) << counts.skipped[k]
              << std::setw(8) << counts.noop[k] << "\n";
    total += counts.applied[k];
  }
  std::cout << "  " << std::left << std::setw(22) << "total" << std::right << std::setw(9) << total
            << "\n";
  EXPECT_EQ(failures, 0);
  // Floors well under what the corpus gives (about half), so that a corpus
  // or parser that silently loses modules fails here.
  for (int k = 0; k < kNumMutations; ++k) {
    if (k == kNumInstructionMutations) continue;
    EXPECT_GE(counts.applied[k], kMinApplied[k]) << kMutationNames[k];
  }
  EXPECT_GE(total, 5000);
}

TEST(FingerprintCorpusTest, ChipAndCompileOptionsChangeKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  FingerprintOptions chip;
  chip.chip = "v6e";
  FingerprintOptions opts;
  opts.compile_options = "fusion=off";
  size_t checked = 0;
  for (const CorpusModule& cm : corpus.modules) {
    Result<Fingerprint> a = FingerprintModule(*cm.module, chip);
    Result<Fingerprint> b = FingerprintModule(*cm.module, opts);
    ASSERT_TRUE(a && b) << cm.path;
    EXPECT_NE(a->key, cm.fp.key) << cm.path;
    EXPECT_NE(a->target, cm.fp.target) << cm.path;
    EXPECT_EQ(a->options, cm.fp.options) << cm.path;
    EXPECT_EQ(a->entry_body, cm.fp.entry_body) << cm.path;
    EXPECT_EQ(a->parameter_shapes, cm.fp.parameter_shapes) << cm.path;
    EXPECT_NE(b->key, cm.fp.key) << cm.path;
    EXPECT_NE(b->key, a->key) << cm.path;
    EXPECT_NE(b->options, cm.fp.options) << cm.path;
    EXPECT_EQ(b->target, cm.fp.target) << cm.path;
    EXPECT_EQ(b->entry_body, cm.fp.entry_body) << cm.path;
    ++checked;
  }
  std::cout << "[ sensitivity ] chip: " << checked << ", compile_options: " << checked << "\n";
  EXPECT_GE(checked, kMinCorpusModules);
}

// Different modules of the corpus mostly have different keys; modules that
// share one are listed so that a collision would be noticed.
TEST(FingerprintCorpusTest, DistinctModulesMostlyHaveDistinctKeys) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  std::map<Hash128, std::vector<const CorpusModule*>> by_key;
  for (const CorpusModule& cm : corpus.modules) by_key[cm.fp.key].push_back(&cm);
  size_t shared = 0;
  for (const auto& [key, mods] : by_key) {
    if (mods.size() < 2) continue;
    shared += mods.size();
    std::cout << "  same key " << key.Hex() << ":";
    for (const CorpusModule* cm : mods) std::cout << " " << cm->path;
    std::cout << "\n";
    // Same key, same entry parameter shapes (a cheap cross-check).
    for (const CorpusModule* cm : mods) {
      EXPECT_EQ(cm->fp.parameter_shape_text, mods[0]->fp.parameter_shape_text)
          << cm->path << " vs " << mods[0]->path;
    }
  }
  std::cout << "[ keys ] " << by_key.size() << " distinct keys over " << corpus.modules.size()
            << " modules (" << shared << " modules share a key with another)\n";
  // The corpus holds some duplicates (the same test module in two files),
  // but most modules differ.
  EXPECT_GE(by_key.size(), corpus.modules.size() * 8 / 10);
}

}  // namespace
}  // namespace kiln::hlo
