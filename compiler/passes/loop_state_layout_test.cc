#include "compiler/passes/loop_state_layout.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/verifier.h"
#include "compiler/passes/operand_order.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
using testing::ParseVerified;

bool LoopLayoutChanged(Result<bool> ran) {
  EXPECT_TRUE(ran.has_value()) << (ran ? "" : ran.error().ToString());
  return ran.value_or(false);
}

// A scan saving each step's attention heads in bf16 (8 rows of every
// 16-row tile hold data) into a stacked state, as a scanned transformer
// saves them for its backward pass; its f32 carry fills its 8-row tiles. `INIT` is the stack's
// initial value and `USE` how the entry reads the loop's result.
std::string ScanText(const std::string& init, const std::string& use, const std::string& body_read = "") {
  return R"(
HloModule scan
body {
  p = (s32[], bf16[4,32,8,128], f32[32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  stack = bf16[4,32,8,128] get-tuple-element(p), index=1
  x = f32[32,8,128] get-tuple-element(p), index=2
  y = f32[32,8,128] negate(x)
  h = bf16[32,8,128] convert(y)
  r = bf16[1,32,8,128] reshape(h)
  z = s32[] constant(0)
  next = bf16[4,32,8,128] dynamic-update-slice(stack, r, i, z, z, z)
  one = s32[] constant(1)
  j = s32[] add(i, one))" +
         body_read + R"(
  ROOT t = (s32[], bf16[4,32,8,128], f32[32,8,128]) tuple(j, next, y)
}
cond {
  p = (s32[], bf16[4,32,8,128], f32[32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[32,8,128] parameter(0)
  s = bf16[4,32,8,128] parameter(1)
  zero = s32[] constant(0)
  fz = bf16[] constant(0)
  )" + init +
         R"(
  init = (s32[], bf16[4,32,8,128], f32[32,8,128]) tuple(zero, first, x)
  loop = (s32[], bf16[4,32,8,128], f32[32,8,128]) while(init), condition=cond, body=body
  saved = bf16[4,32,8,128] get-tuple-element(loop), index=1
  )" + use +
         R"(
}
)";
}

constexpr const char* kZerosInit = "first = bf16[4,32,8,128] broadcast(fz), dimensions={}";
constexpr const char* kNegatedUse = "ROOT out = bf16[4,32,8,128] negate(saved)";

// The stack's layout with the 32 rows next to the 128 lanes.
const std::vector<int64_t> kDenseStack = {3, 1, 2, 0};

std::vector<hlo::Literal> ScanArguments() {
  std::vector<hlo::Literal> args;
  hlo::Literal carry(Shape(PrimitiveType::kF32, {32, 8, 128}));
  for (int64_t i = 0; i < carry.element_count(); ++i)
    carry.Set<float>(i, static_cast<float>(i % 13) * 0.25f - 1.5f);
  args.push_back(std::move(carry));
  hlo::Literal stack(Shape(PrimitiveType::kBF16, {4, 32, 8, 128}));
  for (int64_t i = 0; i < stack.element_count(); ++i) {
    const float value = static_cast<float>(i % 11) * 0.125f - 0.5f;
    stack.Set<uint16_t>(i, static_cast<uint16_t>(std::bit_cast<uint32_t>(value) >> 16));
  }
  args.push_back(std::move(stack));
  return args;
}

// The instruction named `name` in any computation (the test's names are
// unique).
const hlo::Instruction* Named(const hlo::Module& module, std::string_view name) {
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) {
      if (instr->name() == name) return instr.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

std::vector<int64_t> MinorToMajorOf(const hlo::Module& module, std::string_view name) {
  const hlo::Instruction* instr = Named(module, name);
  return instr != nullptr ? instr->shape().layout().minor_to_major : std::vector<int64_t>{};
}

TEST(LoopStateLayoutTest, AStackedStateTakesADenseLayoutEverywhereItLives) {
  const std::string text = ScanText(kZerosInit, kNegatedUse);
  auto before = ParseVerified(text);
  auto after = ParseVerified(text);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(LoopLayoutChanged(AssignLoopStateLayouts(*after)));
  // The loop, its init, the body's and condition's parameter, the body's
  // read of the stack, its update and root, and the entry's read of it.
  EXPECT_EQ(Named(*after, "loop")->shape().tuple_shapes(1).layout().minor_to_major, kDenseStack);
  EXPECT_EQ(Named(*after, "init")->shape().tuple_shapes(1).layout().minor_to_major, kDenseStack);
  for (const auto& c : after->computations()) {
    if (c->name() == "e") continue;
    EXPECT_EQ(c->parameters().front()->shape().tuple_shapes(1).layout().minor_to_major, kDenseStack)
        << c->name();
  }
  EXPECT_EQ(MinorToMajorOf(*after, "stack"), kDenseStack);
  EXPECT_EQ(MinorToMajorOf(*after, "next"), kDenseStack);
  EXPECT_EQ(Named(*after, "t")->shape().tuple_shapes(1).layout().minor_to_major, kDenseStack);
  EXPECT_EQ(MinorToMajorOf(*after, "saved"), kDenseStack);
  // The zeros are computed in the layout: no copy.
  EXPECT_EQ(MinorToMajorOf(*after, "first"), kDenseStack);
  EXPECT_EQ(after->entry()->instruction_count(), before->entry()->instruction_count());
  // The other state elements keep theirs, and the root is the caller's.
  EXPECT_TRUE(Named(*after, "loop")->shape().tuple_shapes(2).has_default_layout());
  EXPECT_TRUE(after->entry()->root()->shape().has_default_layout());
  Status valid = hlo::VerifyModule(*after);
  EXPECT_TRUE(valid.has_value()) << (valid ? "" : valid.error().ToString());
  // Done: a second run changes nothing.
  EXPECT_FALSE(LoopLayoutChanged(AssignLoopStateLayouts(*after)));
  testing::ExpectSameResults(*before, *after, ScanArguments());
}

// A parameter keeps the layout its caller gives it, so the loop starts from
// a copy; a result the entry returns is copied back to the written layout.
TEST(LoopStateLayoutTest, PinnedInitsAndResultsAreCopiedAcross) {
  const std::string text = ScanText("first = bf16[4,32,8,128] copy(s)",
                                    "ROOT out = (bf16[4,32,8,128], bf16[4,32,8,128]) tuple(saved, s)");
  auto parsed = ParseVerified(text);
  ASSERT_NE(parsed, nullptr);
  // `first` is a copy read only by the init: it takes the layout itself.
  ASSERT_TRUE(LoopLayoutChanged(AssignLoopStateLayouts(*parsed)));
  EXPECT_EQ(MinorToMajorOf(*parsed, "first"), kDenseStack);
  const hlo::Instruction* back = Named(*parsed, "saved.as_written");
  ASSERT_NE(back, nullptr);
  EXPECT_TRUE(back->shape().has_default_layout());
  EXPECT_EQ(parsed->entry()->root()->operand(0), back);

  auto before =
      ParseVerified(ScanText("first = bf16[4,32,8,128] add(s, s)\n  other = bf16[4,32,8,128] bitcast(first)",
                             "ROOT out = bf16[4,32,8,128] add(saved, other)"));
  auto after =
      ParseVerified(ScanText("first = bf16[4,32,8,128] add(s, s)\n  other = bf16[4,32,8,128] bitcast(first)",
                             "ROOT out = bf16[4,32,8,128] add(saved, other)"));
  ASSERT_TRUE(before && after);
  // `first` is also read by a bitcast: it keeps its layout and the loop
  // starts from a copy of it.
  ASSERT_TRUE(LoopLayoutChanged(AssignLoopStateLayouts(*after)));
  EXPECT_TRUE(Named(*after, "first")->shape().has_default_layout());
  const hlo::Instruction* copy = Named(*after, "first.loop_layout");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->shape().layout().minor_to_major, kDenseStack);
  EXPECT_EQ(Named(*after, "init")->operand(1), copy);
  // The copy was appended; the pipeline puts operands first after a pass.
  ASSERT_TRUE(PlaceOperandsFirst(*after).has_value());
  Status valid = hlo::VerifyModule(*after);
  EXPECT_TRUE(valid.has_value()) << (valid ? "" : valid.error().ToString());
  testing::ExpectSameResults(*before, *after, ScanArguments());
}

// A body that reads the state in memory order (a bitcast) keeps the layout
// as written: a new layout would change what it reads.
TEST(LoopStateLayoutTest, AStateReadInMemoryOrderKeepsItsLayout) {
  auto module = ParseVerified(
      ScanText(kZerosInit, kNegatedUse,
               "\n  raw = bf16[4,32,1024] bitcast(stack)\n  keep = bf16[4,32,1024] negate(raw)"));
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(LoopLayoutChanged(AssignLoopStateLayouts(*module)));
  EXPECT_TRUE(Named(*module, "loop")->shape().tuple_shapes(1).has_default_layout());
}

// One init value that starts two state elements taking the same layout
// (zeros for two saved stacks) takes it itself: no copy.
TEST(LoopStateLayoutTest, AnInitSharedByElementsOfOneLayoutTakesItOnce) {
  auto module = ParseVerified(R"(
HloModule two_stacks
body {
  p = (s32[], bf16[4,32,8,128], bf16[4,32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = bf16[4,32,8,128] get-tuple-element(p), index=1
  b = bf16[4,32,8,128] get-tuple-element(p), index=2
  na = bf16[4,32,8,128] negate(a)
  nb = bf16[4,32,8,128] add(b, na)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], bf16[4,32,8,128], bf16[4,32,8,128]) tuple(j, na, nb)
}
cond {
  p = (s32[], bf16[4,32,8,128], bf16[4,32,8,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  zero = s32[] constant(0)
  fz = bf16[] constant(1)
  first = bf16[4,32,8,128] broadcast(fz), dimensions={}
  init = (s32[], bf16[4,32,8,128], bf16[4,32,8,128]) tuple(zero, first, first)
  loop = (s32[], bf16[4,32,8,128], bf16[4,32,8,128]) while(init), condition=cond, body=body
  a = bf16[4,32,8,128] get-tuple-element(loop), index=1
  b = bf16[4,32,8,128] get-tuple-element(loop), index=2
  ROOT out = bf16[4,32,8,128] add(a, b)
}
)");
  ASSERT_NE(module, nullptr);
  const int64_t before = module->entry()->instruction_count();
  ASSERT_TRUE(LoopLayoutChanged(AssignLoopStateLayouts(*module)));
  EXPECT_EQ(MinorToMajorOf(*module, "first"), kDenseStack);
  EXPECT_EQ(module->entry()->instruction_count(), before);
  for (int64_t i : {1, 2}) {
    EXPECT_EQ(Named(*module, "loop")->shape().tuple_shapes(i).layout().minor_to_major, kDenseStack) << i;
  }
}

}  // namespace
}  // namespace kiln::passes
