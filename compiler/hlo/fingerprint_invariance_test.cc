// Hand-written modules that differ only in what the fingerprint must ignore
// (fingerprint.h): instruction order, dead computations, default layouts,
// names, metadata, comments, whitespace and channel id numbers.
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_test_util.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo::fingerprint_testing {
namespace {

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

}  // namespace
}  // namespace kiln::hlo::fingerprint_testing
