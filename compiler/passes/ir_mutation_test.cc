// The IR mutation helpers compiler/hlo gained for passes
// (ReplaceOperandWith, ReplaceAllUsesWith, RemoveInstructions,
// SetInstructionOrder).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "compiler/hlo/verifier.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

constexpr char kModule[] = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, x)
  b = f32[4] multiply(a, y)
  ROOT r = f32[4] subtract(b, a)
})";

bool HasUser(const hlo::Instruction* instr, const hlo::Instruction* user) {
  const auto& users = instr->users();
  return std::find(users.begin(), users.end(), user) != users.end();
}

TEST(IrMutationTest, ReplaceAllUsesWithKeepsUsersConsistent) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  hlo::Computation& entry = *module->entry();
  hlo::Instruction* a = FindInstruction(*module, "a");
  hlo::Instruction* y = FindInstruction(*module, "y");
  ASSERT_TRUE(entry.ReplaceAllUsesWith(a, y).has_value());
  EXPECT_TRUE(a->users().empty());
  EXPECT_TRUE(HasUser(y, FindInstruction(*module, "b")));
  EXPECT_TRUE(HasUser(y, entry.root()));
  EXPECT_EQ(entry.root()->operand(1), y);
  EXPECT_TRUE(hlo::VerifyModule(*module).has_value());
}

// Replacing a value by one of its own users: that user keeps reading the
// old value, and a user of both is listed once by the replacement.
TEST(IrMutationTest, ReplaceAllUsesWithAUserKeepsUserListsExact) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  hlo::Computation& entry = *module->entry();
  hlo::Instruction* a = FindInstruction(*module, "a");
  hlo::Instruction* b = FindInstruction(*module, "b");
  hlo::Instruction* r = entry.root();
  ASSERT_TRUE(entry.ReplaceAllUsesWith(a, b).has_value());
  EXPECT_THAT(a->users(), ::testing::ElementsAre(b));
  EXPECT_THAT(b->users(), ::testing::ElementsAre(r));
  EXPECT_EQ(b->operand(0), a);
  EXPECT_EQ(r->operand(0), b);
  EXPECT_EQ(r->operand(1), b);
  // Dropping b's last read of a leaves a without users.
  ASSERT_TRUE(b->ReplaceOperandWith(0, FindInstruction(*module, "x")).has_value());
  EXPECT_TRUE(a->users().empty());
}

TEST(IrMutationTest, ReplaceOperandDropsTheOldUserOnlyWhenNoSlotRemains) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  hlo::Instruction* a = FindInstruction(*module, "a");
  hlo::Instruction* x = FindInstruction(*module, "x");
  hlo::Instruction* y = FindInstruction(*module, "y");
  ASSERT_TRUE(a->ReplaceOperandWith(0, y).has_value());
  EXPECT_TRUE(HasUser(x, a));  // still operand 1
  ASSERT_TRUE(a->ReplaceOperandWith(1, y).has_value());
  EXPECT_FALSE(HasUser(x, a));
  EXPECT_TRUE(HasUser(y, a));
  EXPECT_FALSE(a->ReplaceOperandWith(2, y).has_value());
}

TEST(IrMutationTest, RemoveInstructionsRefusesLiveOnesAndRenumbers) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  hlo::Computation& entry = *module->entry();
  hlo::Instruction* b = FindInstruction(*module, "b");
  std::vector<hlo::Instruction*> dead = {b};
  auto refused = entry.RemoveInstructions(dead);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("used by %r"), std::string::npos);
  EXPECT_EQ(entry.instruction_count(), 5);

  ASSERT_TRUE(entry.ReplaceAllUsesWith(b, FindInstruction(*module, "y")).has_value());
  ASSERT_TRUE(entry.RemoveInstructions(dead).has_value());
  EXPECT_EQ(entry.instruction_count(), 4);
  for (int64_t i = 0; i < entry.instruction_count(); ++i) {
    EXPECT_EQ(entry.instructions()[i]->index_in_parent(), i);
  }
  EXPECT_EQ(FindInstruction(*module, "a")->users().size(), 1u);
  EXPECT_TRUE(hlo::VerifyModule(*module).has_value());
}

TEST(IrMutationTest, SetInstructionOrderTakesOnlyPermutations) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  hlo::Computation& entry = *module->entry();
  std::vector<hlo::Instruction*> order;
  for (const auto& instr : entry.instructions()) order.push_back(instr.get());
  std::swap(order[0], order[1]);  // the two parameters
  ASSERT_TRUE(entry.SetInstructionOrder(order).has_value());
  EXPECT_EQ(entry.instructions()[0]->name(), "y");
  EXPECT_EQ(FindInstruction(*module, "y")->index_in_parent(), 0);
  EXPECT_EQ(FindInstruction(*module, "x")->index_in_parent(), 1);
  order[1] = order[0];
  EXPECT_FALSE(entry.SetInstructionOrder(order).has_value());
  order.pop_back();
  EXPECT_FALSE(entry.SetInstructionOrder(order).has_value());
  EXPECT_EQ(entry.instructions()[0]->name(), "y");
}

}  // namespace
}  // namespace kiln::passes
