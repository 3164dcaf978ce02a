// Hand-written modules that differ in what the fingerprint must see
// (fingerprint.h): shapes, types, attributes, opcodes, constants, operand
// order, control edges and channel pairing, and which per-component
// sub-hash each change moves.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_test_util.h"

namespace kiln::hlo::fingerprint_testing {
namespace {

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

}  // namespace
}  // namespace kiln::hlo::fingerprint_testing
