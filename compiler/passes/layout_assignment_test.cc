#include "compiler/passes/layout_assignment.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "compiler/passes/pass_pipeline.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
using testing::FindInstruction;
using testing::ParseVerified;

// The pass's answer: changed or not; fails the test on an error.
bool Changed(Result<bool> ran) {
  EXPECT_TRUE(ran.has_value()) << (ran ? "" : ran.error().ToString());
  return ran.value_or(false);
}

// bf16 arguments of these dimensions holding multiples of 1/8 (exact in
// bf16, a float's upper half) that repeat every `period` elements.
std::vector<hlo::Literal> Bf16Arguments(std::initializer_list<std::vector<int64_t>> dims, int period) {
  std::vector<hlo::Literal> args;
  for (const std::vector<int64_t>& d : dims) {
    hlo::Literal arg(Shape(PrimitiveType::kBF16, d));
    for (int64_t i = 0; i < arg.element_count(); ++i) {
      const float value = static_cast<float>(i % period) * 0.125f - 0.75f;
      arg.Set<uint16_t>(i, static_cast<uint16_t>(std::bit_cast<uint32_t>(value) >> 16));
    }
    args.push_back(std::move(arg));
  }
  return args;
}

std::optional<std::vector<int64_t>> Denser(PrimitiveType type, std::vector<int64_t> dims) {
  return DenserMinorToMajor(Shape(type, std::move(dims)));
}

TEST(LayoutAssignmentTest, ATileRowDimensionTooShortGivesWayToALongerOne) {
  // Mixtral's expert weights: 8 experts between 4096 and 1024 pad every
  // bf16 tile's 16 rows to 8 of data.
  EXPECT_EQ(Denser(PrimitiveType::kBF16, {1, 4096, 8, 1024}), (std::vector<int64_t>{3, 1, 2, 0}));
  EXPECT_EQ(Denser(PrimitiveType::kF32, {4096, 4, 1024}), (std::vector<int64_t>{2, 0, 1}));
  // The most minor dimension that fills the rows moves, the rest keep their order.
  EXPECT_EQ(Denser(PrimitiveType::kF32, {64, 32, 2, 512}), (std::vector<int64_t>{3, 1, 2, 0}));
  // Dimensions of extent 1 hold no data and do not count as the row dimension.
  EXPECT_EQ(Denser(PrimitiveType::kBF16, {4096, 8, 1, 1024}), (std::vector<int64_t>{3, 0, 2, 1}));
}

TEST(LayoutAssignmentTest, ArraysWhoseTilesHoldDataKeepTheirLayout) {
  EXPECT_FALSE(Denser(PrimitiveType::kF32, {4096, 8, 1024}));     // 8 rows fill an f32 tile
  EXPECT_FALSE(Denser(PrimitiveType::kBF16, {8, 1024}));           // no other dimension to take its place
  EXPECT_FALSE(Denser(PrimitiveType::kBF16, {4, 8, 1024}));        // none long enough either
  EXPECT_FALSE(Denser(PrimitiveType::kBF16, {4096, 8, 64}));       // a short minor dimension: not handled
  EXPECT_FALSE(Denser(PrimitiveType::kF32, {1, 1, 4, 1024}));      // two dimensions hold data
}

constexpr char kExperts[] = R"(HloModule experts
ENTRY e {
  x = bf16[1,256,512] parameter(0)
  w = bf16[1,512,8,256] parameter(1)
  weights = bf16[1,512,8,256] copy(w)
  ROOT y = bf16[1,256,8,256] dot(x, weights), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})";

TEST(LayoutAssignmentTest, AValueOnlyDotsReadIsLaidOutForTheirTilesAndComputesTheSame) {
  auto before = ParseVerified(kExperts);
  auto after = ParseVerified(kExperts);
  ASSERT_TRUE(before && after);
  LayoutAssignment pass;
  ASSERT_TRUE(Changed(pass.Run(*after)));
  EXPECT_EQ(FindInstruction(*after, "weights")->shape().layout().minor_to_major, (std::vector<int64_t>{3, 1, 2, 0}));
  // The parameter and the root keep the layouts the caller sees.
  EXPECT_TRUE(FindInstruction(*after, "w")->shape().has_default_layout());
  EXPECT_TRUE(after->entry()->root()->shape().has_default_layout());
  // Done: a second run changes nothing.
  EXPECT_FALSE(Changed(pass.Run(*after)));

  testing::ExpectSameResults(*before, *after, Bf16Arguments({{1, 256, 512}, {1, 512, 8, 256}}, 13));
}

TEST(LayoutAssignmentTest, ValuesOtherOpsReadOrWriteKeepTheirLayout) {
  auto module = ParseVerified(R"(HloModule kept
ENTRY e {
  x = bf16[1,256,512] parameter(0)
  w = bf16[1,512,8,256] parameter(1)
  shared = bf16[1,512,8,256] copy(w)
  doubled = bf16[1,512,8,256] add(shared, shared)
  summed = bf16[1,512,8,256] add(w, w)
  written = bf16[1,512,8,256]{3,2,0,1} copy(w)
  a = bf16[1,256,8,256] dot(x, shared), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  b = bf16[1,256,8,256] dot(x, summed), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  c = bf16[1,256,8,256] dot(x, written), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  d = bf16[1,256,8,256] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT out = (bf16[1,512,8,256], bf16[1,256,8,256], bf16[1,256,8,256], bf16[1,256,8,256], bf16[1,256,8,256]) tuple(doubled, a, b, c, d)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Changed(LayoutAssignment().Run(*module)));
  for (const char* name : {"w", "shared", "summed"}) {
    EXPECT_TRUE(FindInstruction(*module, name)->shape().has_default_layout()) << name;
  }
  EXPECT_EQ(FindInstruction(*module, "written")->shape().layout().minor_to_major, (std::vector<int64_t>{3, 2, 0, 1}));
}

// Attention heads: 8 heads between the tokens and the head dimension pad
// each bf16 tile's 16 rows to 8 of data. The projection, its scaling and
// the square computed from it share one layout, tokens as the tile rows.
constexpr char kHeads[] = R"(HloModule heads
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[2048,8,128] parameter(0)
  w = bf16[128,128] parameter(1)
  q = bf16[2048,8,128] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  half = bf16[] constant(0.5)
  halves = bf16[2048,8,128] broadcast(half), dimensions={}
  scaled = bf16[2048,8,128] multiply(q, halves)
  sq = bf16[2048,8,128] multiply(scaled, scaled)
  zero = bf16[] constant(0)
  ROOT sum = bf16[8,128] reduce(sq, zero), dimensions={0}, to_apply=add
})";

TEST(LayoutAssignmentTest, ValuesComputedTogetherShareADenserLayout) {
  auto module = ParseVerified(kHeads);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(Changed(LayoutAssignment().Run(*module)));
  for (const char* name : {"q", "halves", "scaled", "sq"}) {
    EXPECT_EQ(FindInstruction(*module, name)->shape().layout().minor_to_major, (std::vector<int64_t>{2, 0, 1}))
        << name;
  }
  EXPECT_TRUE(FindInstruction(*module, "x")->shape().has_default_layout());
  EXPECT_FALSE(Changed(LayoutAssignment().Run(*module)));
}

TEST(LayoutAssignmentTest, AGroupWithAPinnedOrReshapedMemberKeepsItsLayout) {
  // sq is reshaped (a bitcast under the default layout, a move under
  // another); in the second module the group reaches the root.
  for (const char* root : {"ROOT r = bf16[2048,1024] reshape(sq)", "ROOT n = bf16[2048,8,128] negate(sq)"}) {
    std::string text = kHeads;
    const size_t at = text.find("ROOT sum");
    text.replace(at, text.find('\n', at) - at, root);
    auto module = ParseVerified(text);
    ASSERT_NE(module, nullptr) << root;
    EXPECT_FALSE(Changed(LayoutAssignment().Run(*module))) << root;
    EXPECT_TRUE(FindInstruction(*module, "q")->shape().has_default_layout()) << root;
  }
}

TEST(LayoutAssignmentTest, DenserLayoutsComputeTheSame) {
  auto before = ParseVerified(kHeads);
  auto after = ParseVerified(kHeads);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(Changed(LayoutAssignment().Run(*after)));
  testing::ExpectSameResults(*before, *after, Bf16Arguments({{2048, 8, 128}, {128, 128}}, 7));
}

TEST(LayoutAssignmentTest, TheDefaultPipelineAssignsLayouts) {
  auto module = ParseVerified(kExperts);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(Changed(MakeDefaultPipeline().Run(*module)));
  EXPECT_FALSE(FindInstruction(*module, "weights")->shape().has_default_layout());
}

}  // namespace
}  // namespace kiln::passes
