// Pins the fingerprint encoding: cache databases are keyed by these hashes,
// so the bytes hashed for a given module must never change by accident
// (only together with kCompilerFormatVersion and a migration). The modules
// exercise each part of the encoding: shapes with tiled layouts, memory
// spaces, dynamic dimensions, tuples and tokens; literals; text, raw and
// computation attributes; channel groups and control edges; the module
// configuration. The expected values were produced by the first
// implementation of the encoding; the keys were renewed when compiler
// formats 2 (memory-aware kernel order), 3 (moves that are bitcasts
// under their layouts, loop-invariant state read in place, fused loop
// bodies), 4 (scan stacks partitioned like their updates), 5 (layouts
// for values only dots read), 6 (moves between loop-fusible ops kept as
// moves), 7 (cheap producers computed inside dots: prologues), 8
// (producer-consumer multi-output fusion) and 9 (broadcasts never
// materialized for many consumers) changed the version they hash; the
// sub-hashes never changed.
#include <gtest/gtest.h>

#include <string_view>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_test_util.h"

namespace kiln::hlo {
namespace {

using fingerprint_testing::Fp;

constexpr std::string_view kShapesAndAttributes = R"(
HloModule shapes, entry_computation_layout={(f32[8,128]{1,0:T(8,128)S(1)}, s32[<=4]{0}, (bf16[2]{0}, u8[3]{0}))->f32[8,128]{1,0:T(8,128)S(1)}}, replica_count=2, frontend_attributes={ a = "1" ,b="x y" }

ENTRY %main {
  %p0 = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)
  %p1 = s32[<=4]{0} parameter(1)
  %p2 = (bf16[2]{0}, u8[3]{0}) parameter(2), metadata={op_name="ignored"}
  %c = f32[2,2]{0,1} constant({{1, 2}, {3, 4}})
  %e = bf16[2]{0} get-tuple-element(%p2), index=0
  %cc = f32[8,128]{1,0:T(8,128)S(1)} custom-call(%p0, %c), custom_call_target="my_target", backend_config={"key": "a b", "n" : 1}
  %tok = token[] after-all()
  ROOT %out = f32[8,128]{1,0:T(8,128)S(1)} add(%cc, %p0), sharding={replicated}
}
)";

constexpr std::string_view kCallsAndChannels = R"(
HloModule calls

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%cond (c: (s32[], f32[4])) -> pred[] {
  %c = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (b: (s32[], f32[4])) -> (s32[], f32[4]) {
  %b = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%b), index=0
  %v = f32[4] get-tuple-element(%b), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %w = f32[4] all-reduce(%v), channel_id=7, replica_groups={{0,1}}, to_apply=%add
  ROOT %t = (s32[], f32[4]) tuple(%j, %w)
}

ENTRY %main {
  %p = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %p)
  %loop = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  %r = f32[4] get-tuple-element(%loop), index=1
  %tok = token[] after-all()
  %send = (f32[4], u32[], token[]) send(%r, %tok), channel_id=3
  %recv = (f32[4], u32[], token[]) recv(%tok), channel_id=3
  %send-done = token[] send-done(%send), channel_id=3
  %recv-done = (f32[4], token[]) recv-done(%recv), channel_id=3
  %got = f32[4] get-tuple-element(%recv-done), index=0
  %neg = f32[4] negate(%got), control-predecessors={%send-done}
  %zero.f = f32[] constant(0)
  ROOT %sum = f32[] reduce(%neg, %zero.f), dimensions={0}, to_apply=%add
}
)";

struct Golden {
  std::string_view key;
  std::string_view entry_body;
  std::string_view module_config;
};

void ExpectGolden(std::string_view text, const Golden& want) {
  const Fingerprint fp = Fp(text);
  EXPECT_EQ(fp.key.Hex(), want.key);
  EXPECT_EQ(fp.entry_body.Hex(), want.entry_body);
  EXPECT_EQ(fp.module_config.Hex(), want.module_config);
}

TEST(FingerprintGoldenTest, ShapesAndAttributes) {
  ExpectGolden(kShapesAndAttributes, {.key = "4f1c436193360708c803be38739b452d",
                                      .entry_body = "63469493dd6797d4538f45a2d506398f",
                                      .module_config = "51752e2d64b25472af8d0e37d98a30b2"});
  const Fingerprint fp = Fp(kShapesAndAttributes);
  ASSERT_EQ(fp.parameter_shapes.size(), 3u);
  EXPECT_EQ(fp.parameter_shapes[0].Hex(), "5b26326c7a4eff8a3e3da9194577699a");
  EXPECT_EQ(fp.parameter_shapes[1].Hex(), "6906b0a3fed4d453feafc5af78957f67");
  EXPECT_EQ(fp.parameter_shapes[2].Hex(), "cd6ad2be38fc0ea7f96538d0256ee92c");
}

TEST(FingerprintGoldenTest, CallsChannelsAndControlEdges) {
  ExpectGolden(kCallsAndChannels, {.key = "5d7e6129c330499696be648c05ec7578",
                                   .entry_body = "02f8cf5478db3a4c30877f0e4a753779",
                                   .module_config = "f76a57cf58abcbbef68c7ee743683c23"});
  const Fingerprint fp = Fp(kCallsAndChannels);
  ASSERT_EQ(fp.called_computations.size(), 3u);
  EXPECT_EQ(fp.called_computations[0].hash.Hex(), "e44eccb74f6413178ca47688d91f5a4c");
  EXPECT_EQ(fp.called_computations[1].hash.Hex(), "495209ce3e1e2350db78ba5f49676b21");
  EXPECT_EQ(fp.called_computations[2].hash.Hex(), "a8cf463aa5d4dcbac50b50bc43295363");
}

TEST(FingerprintGoldenTest, OptionsAndTarget) {
  const Fingerprint fp =
      Fp(fingerprint_testing::kOrderA, {.chip = "v6e", .compile_options = "plan=given tile = 8"});
  EXPECT_EQ(fp.key.Hex(), "b2784a96c6b53146512456708025e0da");
  EXPECT_EQ(fp.options.Hex(), "3b8f41f5fc0719d1e0cbc7cc7ea5eafa");
  EXPECT_EQ(fp.target.Hex(), "34713a447f20bbe9eb25043e374caa14");
}

}  // namespace
}  // namespace kiln::hlo
