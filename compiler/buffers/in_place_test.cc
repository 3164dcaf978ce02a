#include "compiler/buffers/in_place.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::buffers {
namespace {

using fusion::PlanComputation;
using fusion::PlanKind;
using fusion::PlannerOptions;
using passes::testing::ParseVerified;

constexpr int64_t kMebibyte = 1 << 20;

Result<BufferAssignment> Assign(const std::string& text, std::span<const OutputAlias> aliases = {}) {
  auto module = ParseVerified(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return InvalidArgumentError("parse");
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  if (!plan) return std::unexpected(plan.error());
  return AssignBuffers(*module->entry(), *plan, int64_t{16} << 30, "v5e", aliases);
}

// The loop state (4 MiB) starts from a value made just for it: the loop
// runs in that value's memory instead of a second 4 MiB.
TEST(InPlaceTest, ALoopRunsInTheMemoryOfItsDyingInitialState) {
  auto assigned = Assign(R"(
HloModule loop
cond {
  s = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[1024,1024] get-tuple-element(s), index=1
  y = f32[1024,1024] negate(x)
  ROOT t = (s32[], f32[1024,1024]) tuple(j, y)
}
ENTRY e {
  p = f32[1024,1024] parameter(0)
  start = f32[1024,1024] exponential(p)
  zero = s32[] constant(0)
  init = (s32[], f32[1024,1024]) tuple(zero, start)
  w = (s32[], f32[1024,1024]) while(init), condition=cond, body=body
  ROOT r = f32[1024,1024] get-tuple-element(w), index=1
})");
  ASSERT_TRUE(assigned) << assigned.error().message;
  // Parameter, then `start` whose memory the loop state keeps: 4 + 4 MiB
  // (plus the counter), not 4 + 4 + 4.
  EXPECT_LT(assigned->peak_bytes, 9 * kMebibyte);
  int64_t shared = 0;
  for (const Buffer& b : assigned->buffers) shared += b.shared_bytes;
  EXPECT_EQ(shared, 4 * kMebibyte);
}

// A scan's weights: the loop carries them unchanged (its body returns the
// element it got), and the same weights are read again after the loop. The
// loop reads them where they lie, as XLA's copy insertion leaves read-only
// loop state: no second 4 MiB for them in the loop's state, whether they
// are computed before the loop or a copy of a parameter.
std::string ScanOverWeights(const std::string& weights, bool body_changes_weights) {
  const std::string carried = body_changes_weights ? "  w2 = f32[1024,1024] negate(w)\n" : "";
  return R"(
HloModule scan
cond {
  s = (s32[], f32[1024,1024], f32[8,1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[1024,1024], f32[8,1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[1024,1024] get-tuple-element(s), index=1
  x = f32[8,1024] get-tuple-element(s), index=2
  y = f32[8,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)" + carried + R"(  ROOT t = (s32[], f32[1024,1024], f32[8,1024]) tuple(j, )" +
         (body_changes_weights ? "w2" : "w") + R"(, y)
}
ENTRY e {
  p = f32[1024,1024] parameter(0)
  x0 = f32[8,1024] parameter(1)
  weights = f32[1024,1024] )" + weights + R"(
  zero = s32[] constant(0)
  init = (s32[], f32[1024,1024], f32[8,1024]) tuple(zero, weights, x0)
  loop = (s32[], f32[1024,1024], f32[8,1024]) while(init), condition=cond, body=body
  last = f32[8,1024] get-tuple-element(loop), index=2
  ROOT r = f32[8,1024] dot(last, weights), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
}

TEST(InPlaceTest, ALoopReadsWeightsItCarriesUnchangedWhereTheyLie) {
  for (const std::string weights : {"negate(p)", "exponential(p)"}) {
    auto carried = Assign(ScanOverWeights(weights, false));
    ASSERT_TRUE(carried) << carried.error().message;
    // The parameter (4 MiB), the weights (4 MiB) and the small state: not a
    // third 4 MiB for the loop's copy of the weights.
    EXPECT_LT(carried->peak_bytes, 9 * kMebibyte) << weights;
    // A body that writes new weights into the state needs the state's own
    // memory: the weights are read after the loop.
    auto changed = Assign(ScanOverWeights(weights, true));
    ASSERT_TRUE(changed) << changed.error().message;
    EXPECT_GE(changed->peak_bytes, 12 * kMebibyte) << weights;
  }
}

// The updated array is still read after the update: no sharing then.
TEST(InPlaceTest, AnUpdateOfAnArrayReadLaterGetsItsOwnMemory) {
  const std::string text = R"(
HloModule dus
ENTRY e {
  p = f32[1024,1024] parameter(0)
  u = f32[8,1024] parameter(1)
  i = s32[] parameter(2)
  zero = s32[] constant(0)
  a = f32[1024,1024] exponential(p)
  d = f32[1024,1024] dynamic-update-slice(a, u, i, zero)
  ROOT r = f32[1024,1024] )";
  auto in_place = Assign(text + "negate(d)\n}\n");
  auto read_later = Assign(text + "add(d, a)\n}\n");
  ASSERT_TRUE(in_place) << in_place.error().message;
  ASSERT_TRUE(read_later) << read_later.error().message;
  EXPECT_EQ(read_later->peak_bytes - in_place->peak_bytes, 4 * kMebibyte);
}

constexpr const char* kSgdStep = R"(
HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  w = f32[1024,1024] parameter(0)
  g = f32[1024,1024] parameter(1)
  ROOT w2 = f32[1024,1024] subtract(w, g)
})";

TEST(InPlaceTest, ADonatedParameterHoldsItsUpdate) {
  auto aliases = ParseOutputAliases("{{0}:(0,{},may-alias)}");
  ASSERT_TRUE(aliases) << aliases.error().message;
  // The root is not a tuple: output {} names it; {0} names nothing here.
  auto whole = ParseOutputAliases("{{}:(0,{})}");
  ASSERT_TRUE(whole) << whole.error().message;
  auto without = Assign(kSgdStep);
  auto with = Assign(kSgdStep, *whole);
  auto wrong_index = Assign(kSgdStep, *aliases);
  ASSERT_TRUE(without && with && wrong_index);
  EXPECT_EQ(without->peak_bytes, 12 * kMebibyte);
  EXPECT_EQ(with->peak_bytes, 8 * kMebibyte);
  EXPECT_EQ(wrong_index->peak_bytes, 12 * kMebibyte);
}

TEST(OutputAliasesTest, ParsesTheHeaderFormAndNamesWhereItIsWrong) {
  auto parsed = ParseOutputAliases("{{0}:(0,{},may-alias),{1,2}:(3,{1},must-alias),{}:(4,{})}");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].output_index, std::vector<int64_t>{0});
  EXPECT_EQ((*parsed)[0].parameter, 0);
  EXPECT_FALSE((*parsed)[0].must_alias);
  EXPECT_EQ((*parsed)[1].output_index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*parsed)[1].parameter, 3);
  EXPECT_EQ((*parsed)[1].parameter_index, std::vector<int64_t>{1});
  EXPECT_TRUE((*parsed)[1].must_alias);
  EXPECT_TRUE((*parsed)[2].output_index.empty());
  EXPECT_TRUE(ParseOutputAliases("{}")->empty());

  auto bad = ParseOutputAliases("{{0}:(x,{})}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "input_output_alias: expected a non-negative number at character 6 of '{{0}:(x,{})}'");
  EXPECT_FALSE(ParseOutputAliases("{{0}:(0,{},maybe)}"));
  EXPECT_FALSE(ParseOutputAliases("{{0}:(0,{})"));
  EXPECT_FALSE(ParseOutputAliases("{{0}:(0,{})}x"));
  EXPECT_FALSE(ParseOutputAliases(""));
}

}  // namespace
}  // namespace kiln::buffers
