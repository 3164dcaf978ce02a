#include "compiler/passes/layout_groups.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/computation.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using testing::FindInstruction;
using testing::ParseVerified;

TEST(LayoutGroupsTest, ElementwiseOpsJoinOperandsOfTheirDimensionsButCopiesDoNot) {
  auto module = ParseVerified(R"(HloModule g
ENTRY e {
  x = f32[16,128] parameter(0)
  y = f32[16,128] parameter(1)
  s = f32[16] parameter(2)
  a = f32[16,128] add(x, y)
  b = f32[16,128] broadcast(s), dimensions={0}
  m = f32[16,128] multiply(a, b)
  c = f32[16,128]{0,1} copy(m)
  n = f32[16,128] negate(c)
  ROOT t = (f32[16,128], f32[16,128]) tuple(m, n)
})");
  ASSERT_NE(module, nullptr);
  LayoutGroups groups(*module->entry());
  auto group = [&](const char* name) { return groups.Find(FindInstruction(*module, name)); };
  for (const char* name : {"y", "a", "b", "m"}) EXPECT_EQ(group(name), group("x")) << name;
  EXPECT_NE(group("c"), group("m"));
  EXPECT_EQ(group("n"), group("c"));
  EXPECT_NE(group("s"), group("x"));  // other dimensions
  // Members: array values of rank 2 or more, in program order.
  const auto members = groups.Members();
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].size(), 5u);
  EXPECT_EQ(members[1].size(), 2u);
}

TEST(LayoutGroupsTest, AChainOfHundredsOfThousandsOfOpsIsOneGroup) {
  // A 300k-op elementwise chain (kiln serve's slow-compile test module):
  // a recursive find over an unbalanced tree overflowed the stack.
  constexpr int kLength = 300'000;
  auto module = std::make_unique<hlo::Module>("chain");
  auto computation = std::make_unique<hlo::Computation>("e");
  const Shape shape(PrimitiveType::kF32, {8, 128});
  Instruction* p = computation->AddInstruction(Instruction::CreateParameter(0, shape, "p"));
  Instruction* previous = p;
  for (int i = 0; i < kLength; ++i) {
    previous = computation->AddInstruction(
        Instruction::Create(Opcode::kAdd, shape, {previous, p}, "a" + std::to_string(i)));
  }
  computation->set_root(previous);
  hlo::Computation* entry = module->AddComputation(std::move(computation), /*is_entry=*/true);
  LayoutGroups groups(*entry);
  EXPECT_EQ(groups.Find(previous), groups.Find(p));
  const auto members = groups.Members();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].size(), static_cast<size_t>(kLength + 1));
}

}  // namespace
}  // namespace kiln::passes
