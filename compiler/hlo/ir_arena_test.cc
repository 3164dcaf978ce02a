// A parsed module's instructions and their operand and user lists live in
// the module's arena (ir_arena.h); instructions a pass adds live on the
// heap beside them. These tests mix the two through every mutation the IR
// offers; under the sanitizer build they also show that removing or
// freeing either kind leaks nothing and touches nothing freed.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/ir_arena.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

constexpr char kArenaModule[] = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  n = f32[4] negate(a)
  ROOT m = f32[4] multiply(n, a)
}
)";

std::unique_ptr<Module> ParseArenaModule(const std::string& text) {
  auto parsed = ParseModule(text, "arena.hlo");
  EXPECT_TRUE(parsed.has_value()) << parsed.error().ToString();
  return parsed ? std::move(*parsed) : nullptr;
}

Instruction* FindByName(const Computation& c, std::string_view name) {
  for (const InstructionPtr& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

TEST(IrArenaTest, ParsedInstructionsLiveInTheirModulesArena) {
  std::unique_ptr<Module> m = ParseArenaModule(kArenaModule);
  ASSERT_NE(m, nullptr);
  for (const InstructionPtr& i : m->entry()->instructions()) EXPECT_TRUE(i->in_arena()) << i->name();
  EXPECT_GE(m->arena()->bytes_allocated(), 5 * sizeof(Instruction));
}

TEST(IrArenaTest, TheArenaGrowsWithTheModuleNotOneAllocationPerInstruction) {
  std::string text = "HloModule big\nENTRY e {\n  p = f32[] parameter(0)\n  v0 = f32[] negate(p)\n";
  const int n = 20000;
  for (int i = 1; i < n; ++i) {
    text += "  v" + std::to_string(i) + " = f32[] add(v" + std::to_string(i - 1) + ", p)\n";
  }
  text += "  ROOT r = f32[] negate(v" + std::to_string(n - 1) + ")\n}\n";
  std::unique_ptr<Module> m = ParseArenaModule(text);
  ASSERT_NE(m, nullptr);
  const size_t bytes = m->arena()->bytes_allocated();
  // Each instruction, its two operands and its one user, plus the list
  // regrowths of `p`'s 20k users: well under a kilobyte per instruction.
  EXPECT_GE(bytes, n * sizeof(Instruction));
  EXPECT_LE(bytes, n * (sizeof(Instruction) + 256));
}

TEST(IrArenaTest, HeapAndArenaInstructionsMixThroughEveryMutation) {
  std::unique_ptr<Module> m = ParseArenaModule(kArenaModule);
  ASSERT_NE(m, nullptr);
  Computation* e = m->entry();
  Instruction* p = FindByName(*e, "p");
  Instruction* a = FindByName(*e, "a");
  Instruction* n = FindByName(*e, "n");
  ASSERT_TRUE(p && a && n);

  // A heap instruction reading arena ones: their user lists grow in the arena.
  Instruction* abs = e->AddInstruction(Instruction::Create(Opcode::kAbs, a->shape(), {a}, "abs"));
  EXPECT_FALSE(abs->in_arena());
  ASSERT_EQ(a->users().size(), 3u);
  EXPECT_EQ(a->users().back(), abs);

  // Arena users now read the heap instruction, and the other way round.
  ASSERT_TRUE(e->ReplaceAllUsesWith(n, abs));
  EXPECT_EQ(e->root()->operand(0), abs);
  EXPECT_TRUE(n->users().empty());
  ASSERT_TRUE(abs->ReplaceOperandWith(0, p));
  EXPECT_EQ(p->users().back(), abs);

  // Removing an arena instruction that owns heap memory (a constant's
  // literal) and one that does not: the sanitizer build reports a leak if
  // its destructor did not run.
  ASSERT_TRUE(e->ReplaceAllUsesWith(a, p));
  Instruction* c = FindByName(*e, "c");
  ASSERT_NE(c, nullptr);
  std::vector<Instruction*> dead = {n, a, c};
  ASSERT_TRUE(e->RemoveInstructions(dead));
  EXPECT_EQ(FindByName(*e, "c"), nullptr);
  EXPECT_EQ(e->instruction_count(), 3);
  EXPECT_EQ(e->root()->operand(0), abs);
  EXPECT_EQ(e->root()->operand(1), p);
}

TEST(IrArenaTest, AModuleThatFailsToParseFreesWhatItBuilt) {
  // Fails after several instructions (and a constant) were placed.
  auto parsed = ParseModule(
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  c = f32[4] constant({1, 2, 3, 4})\n"
      "  a = f32[4] add(p, c)\n  ROOT b = f32[4] add(a, missing)\n}\n",
      "bad.hlo");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error().ToString().find("missing"), std::string::npos);
}

}  // namespace
}  // namespace kiln::hlo
