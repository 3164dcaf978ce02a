// A parsed module's instructions, their names, attributes and lists live in
// the module's arena (ir_arena.h), which also keeps their shapes and
// literals; instructions a pass adds live on the heap beside them. These
// tests mix the two through every mutation the IR offers; under the
// sanitizer build they also show that removing or freeing either kind
// leaks nothing and touches nothing freed, and that what is copied out of
// a module outlives it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
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

  // Removing arena instructions, a constant among them: the arena keeps
  // their memory and the literal until the module dies (the sanitizer
  // build reports a leak if it does not release them then).
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

TEST(IrArenaTest, NamesAndAttributeValuesLiveInTheArena) {
  const std::string long_name = "a_name_much_longer_than_fifteen_bytes";
  const std::string metadata = R"({op_name="jit(train_step)/a/long/op/name" source_file="model.py"})";
  std::unique_ptr<Module> m =
      ParseArenaModule("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT " + long_name +
                       " = f32[4] negate(p), metadata=" + metadata + "\n}\n");
  ASSERT_NE(m, nullptr);
  const IrArena& arena = *m->arena();
  Instruction* root = m->entry()->root();
  EXPECT_EQ(root->name(), long_name);
  EXPECT_TRUE(arena.Contains(root->name().data()));
  const Attribute* attr = root->FindAttribute("metadata");
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(std::string_view(attr->value), metadata);
  EXPECT_TRUE(arena.Contains(attr->value.data()));
  EXPECT_TRUE(arena.Contains(root));

  // What a pass sets on an arena instruction goes to the arena too; a heap
  // instruction's name does not.
  root->set_name("renamed_" + long_name);
  root->SetTextAttribute("backend_config_of_some_length", "{a_value_longer_than_fifteen_bytes}");
  EXPECT_TRUE(arena.Contains(root->name().data()));
  EXPECT_TRUE(arena.Contains(root->AttributeText("backend_config_of_some_length")->data()));
  Instruction* heap = m->entry()->AddInstruction(
      Instruction::Create(Opcode::kAbs, root->shape(), {root}, "heap_" + long_name));
  EXPECT_FALSE(arena.Contains(heap));
  EXPECT_FALSE(arena.Contains(heap->name().data()));
  int on_stack = 0;
  EXPECT_FALSE(arena.Contains(&on_stack));
}

TEST(IrArenaTest, WhatIsCopiedOutOfAModuleOutlivesIt) {
  Shape shape;
  Literal literal;
  Attribute metadata;
  std::string name;
  {
    std::unique_ptr<Module> m = ParseArenaModule(kArenaModule);
    ASSERT_NE(m, nullptr);
    Instruction* c = FindByName(*m->entry(), "c");
    ASSERT_NE(c, nullptr);
    c->AddAttribute(Attribute::Text("metadata", "{op_name=\"a name longer than fifteen bytes\"}"));
    // A shape set by a pass is kept by the arena as well.
    c->set_shape(Shape(PrimitiveType::kF32, {4}));
    shape = c->shape();
    literal = *c->literal();
    metadata = *c->FindAttribute("metadata");
    name = std::string(m->entry()->root()->name());
  }
  // Under the sanitizer build, reading freed memory here would fail.
  EXPECT_EQ(shape.ToString(), "f32[4]");
  EXPECT_EQ(literal.ValueToString(), "{1, 2, 3, 4}");
  EXPECT_EQ(metadata.value, "{op_name=\"a name longer than fifteen bytes\"}");
  EXPECT_EQ(name, "m");
}

TEST(IrArenaTest, ARequestLargerThanTheChunkGetsItsOwnMemory) {
  IrArena arena;
  std::pmr::memory_resource& memory = arena;
  auto* small = static_cast<char*>(memory.allocate(100, 8));
  const size_t big_bytes = 3 * IrArena::kFirstChunkBytes;  // more than the first chunk holds
  auto* big = static_cast<char*>(memory.allocate(big_bytes, 64));
  auto* after = static_cast<char*>(memory.allocate(100, 8));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
  std::memset(small, 1, 100);
  std::memset(big, 2, big_bytes);  // the sanitizer build fails on any overrun
  std::memset(after, 3, 100);
  for (char* p : {small, big, big + big_bytes - 1, after}) EXPECT_TRUE(arena.Contains(p));
  EXPECT_TRUE(small + 100 <= big || big + big_bytes <= small);
  EXPECT_TRUE(after + 100 <= big || big + big_bytes <= after);
  EXPECT_EQ(small[99], 1);
  EXPECT_EQ(after[0], 3);
  EXPECT_GE(arena.bytes_allocated(), big_bytes + 200);
}

TEST(IrArenaTest, ModulesAliveTogetherShareNoMemory) {
  // Big enough to take full-size chunks; each round takes the ones the
  // last round's modules handed to the pool (poisoned for ASan meanwhile).
  std::string text = "HloModule big\nENTRY e {\n  p = f32[] parameter(0)\n  v0 = f32[] negate(p)\n";
  for (int i = 1; i < 20000; ++i) {
    text += "  v" + std::to_string(i) + " = f32[] add(v" + std::to_string(i - 1) + ", p)\n";
  }
  text += "  ROOT r = f32[] negate(v19999)\n}\n";
  for (int round = 0; round < 3; ++round) {
    std::unique_ptr<Module> a = ParseArenaModule(text);
    std::unique_ptr<Module> b = ParseArenaModule(text);
    ASSERT_TRUE(a && b);
    ASSERT_GT(a->arena()->bytes_allocated(), 2 * IrArena::kMaxChunkBytes);
    for (const InstructionPtr& i : b->entry()->instructions()) {
      ASSERT_FALSE(a->arena()->Contains(i.get())) << i->name();
      ASSERT_TRUE(b->arena()->Contains(i.get())) << i->name();
    }
    EXPECT_EQ(a->entry()->root()->operand(0)->name(), "v19999");
  }
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
