// Unit tests of the verifier's structural checks: parameters, entry layout,
// cycles, operand counts and IR the parser never produces (built through the
// IR API). Each bad module's error must name the right instruction and say
// what is wrong.
#include "compiler/hlo/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "compiler/hlo/verifier_test_util.h"

namespace kiln::hlo::verifier_testing {
namespace {

TEST(VerifierTest, RejectsParameterGapsAndDuplicates) {
  std::unique_ptr<Module> gap = Parse(WithEntry(R"(
  x = f32[2] parameter(0)
  y = f32[2] parameter(2)
  ROOT a = f32[2] add(x, y)
)"));
  ASSERT_TRUE(gap);
  Status s = VerifyModule(*gap);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "computation %main: parameter number 1 is missing"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  y = f32[2] parameter(0)
  ROOT a = f32[2] add(x, y)
)"),
                      "y", "parameter number 0 is already used by %x"));
}

TEST(VerifierTest, RejectsEntryLayoutMismatch) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m, entry_computation_layout={(f32[2,3])->f16[2,3]}

ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] copy(x)
}
)");
  ASSERT_TRUE(m);
  Status s = VerifyModule(*m);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "entry_computation_layout result f16[2,3]"));
  EXPECT_TRUE(Contains(s.error().ToString(), "does not match the root %c of shape f32[2,3]"));
  std::unique_ptr<Module> count =
      Parse(R"(HloModule m, entry_computation_layout={(f32[2,3], f32[2,3])->f32[2,3]}

ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] copy(x)
}
)");
  ASSERT_TRUE(count);
  Status s2 = VerifyModule(*count);
  ASSERT_FALSE(s2);
  EXPECT_TRUE(Contains(s2.error().ToString(), "has 2 parameters but entry computation %main has 1"));
}

// The parser resolves names only backwards, so it cannot write a cycle:
// the cyclic modules are built through the IR API.
// x -> a -> b -> r, valid as written; `a` and `b` are the middle two.
struct Chain {
  std::unique_ptr<Module> module;
  Instruction* a = nullptr;
  Instruction* b = nullptr;
};
Chain ParseChain() {
  Chain chain;
  chain.module = Parse(WithEntry(R"(
  x = f32[2] parameter(0)
  a = f32[2] negate(x)
  b = f32[2] negate(a)
  ROOT r = f32[2] add(a, b)
)"));
  EXPECT_TRUE(chain.module);
  if (!chain.module) return chain;
  EXPECT_TRUE(VerifyModule(*chain.module));  // acyclic as written
  chain.a = chain.module->entry()->instructions()[1].get();
  chain.b = chain.module->entry()->instructions()[2].get();
  EXPECT_EQ(chain.a->name(), "a");
  EXPECT_EQ(chain.b->name(), "b");
  return chain;
}

TEST(VerifierTest, RejectsCycleThroughOperands) {
  auto [m, a, b] = ParseChain();
  ASSERT_TRUE(m);
  ASSERT_TRUE(a->ReplaceOperandWith(0, b));  // a = negate(b), b = negate(a)
  Status s = VerifyModule(*m);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(),
                       "is part of a cycle through its operands or control predecessors"))
      << s.error().ToString();
}

// Built through the IR API, an instruction may come before an operand in
// the list; without a cycle that is still a valid computation.
TEST(VerifierTest, AcceptsAnOperandListedAfterItsUser) {
  auto module = Parse(WithEntry(R"(
  x = f32[2] parameter(0)
  a = f32[2] negate(x)
  c = f32[2] negate(x)
  ROOT r = f32[2] add(a, c)
)"));
  ASSERT_TRUE(module);
  Instruction* a = module->entry()->instructions()[1].get();
  Instruction* c = module->entry()->instructions()[2].get();
  ASSERT_TRUE(a->ReplaceOperandWith(0, c));  // a = negate(c), c listed after a
  EXPECT_TRUE(VerifyModule(*module));
  // Closing the loop through c is still found.
  ASSERT_TRUE(c->ReplaceOperandWith(0, a));
  Status s = VerifyModule(*module);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "%a") && Contains(s.error().ToString(), "is part of a cycle"))
      << s.error().ToString();
}

TEST(VerifierTest, RejectsCycleThroughControlPredecessors) {
  auto [m, a, b] = ParseChain();
  ASSERT_TRUE(m);
  // b reads a; making b a control predecessor of a closes the cycle.
  Attribute control;
  control.name = "control-predecessors";
  control.kind = Attribute::Kind::kInstructions;
  control.instructions = {b};
  control.braced = true;
  a->AddAttribute(std::move(control));
  ASSERT_EQ(a->control_predecessors().size(), 1u);
  Status s = VerifyModule(*m);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "is part of a cycle")) << s.error().ToString();
}

// Defects the parser never produces, built through the IR API.
TEST(VerifierTest, RejectsBrokenIrWithoutCrashing) {
  auto module = std::make_unique<hlo::Module>("broken");
  auto comp = std::make_unique<Computation>("main");
  Instruction* p1 =
      comp->AddInstruction(Instruction::CreateParameter(1, Shape(PrimitiveType::kF32, {2}), "p1"));
  Computation* c = module->AddComputation(std::move(comp), /*is_entry=*/true);
  c->set_root(p1);
  Status missing = VerifyModule(*module);
  ASSERT_FALSE(missing);
  EXPECT_TRUE(Contains(missing.error().ToString(), "parameter number 0 is missing"));

  // A root from another computation, and no root at all.
  auto other = std::make_unique<Computation>("other");
  Instruction* foreign =
      other->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "q"));
  auto m2 = std::make_unique<hlo::Module>("m2");
  auto c2 = std::make_unique<Computation>("main");
  c2->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  c2->set_root(foreign);
  Computation* main2 = m2->AddComputation(std::move(c2), true);
  Status foreign_root = VerifyModule(*m2);
  ASSERT_FALSE(foreign_root);
  EXPECT_TRUE(Contains(foreign_root.error().ToString(), "root %q is not an instruction of it"));
  main2->set_root(nullptr);
  Status no_root = VerifyModule(*m2);
  ASSERT_FALSE(no_root);
  EXPECT_TRUE(Contains(no_root.error().ToString(), "computation %main: has no root instruction"));

  // An operand from another computation and a null operand.
  auto m3 = std::make_unique<hlo::Module>("m3");
  auto c3 = std::make_unique<Computation>("main");
  Instruction* p =
      c3->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  Instruction* add = c3->AddInstruction(
      Instruction::Create(Opcode::kAdd, Shape(PrimitiveType::kF32, {2}), {p, foreign}, "sum"));
  c3->set_root(add);
  m3->AddComputation(std::move(c3), true);
  Status cross = VerifyModule(*m3);
  ASSERT_FALSE(cross);
  EXPECT_TRUE(Contains(cross.error().ToString(),
                       "instruction %sum in computation %main: operand 1 %q is not in the same computation"));

  // No entry, and no computations at all.
  hlo::Module empty("empty");
  Status no_entry = VerifyModule(empty);
  ASSERT_FALSE(no_entry);
  EXPECT_TRUE(Contains(no_entry.error().ToString(), "has no entry computation"));
}

TEST(VerifierTest, RejectsWrongOperandCountsAndCallCycles) {
  auto module = std::make_unique<hlo::Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Instruction* p =
      comp->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  Instruction* add = comp->AddInstruction(
      Instruction::Create(Opcode::kAdd, Shape(PrimitiveType::kF32, {2}), {p}, "lonely_add"));
  comp->set_root(add);
  module->AddComputation(std::move(comp), true);
  Status arity = VerifyModule(*module);
  ASSERT_FALSE(arity);
  EXPECT_TRUE(Contains(arity.error().ToString(),
                       "instruction %lonely_add in computation %main: add expects 2 operand(s), has 1"));

  // A computation that calls itself.
  auto rec = std::make_unique<hlo::Module>("rec");
  auto body = std::make_unique<Computation>("loop");
  Instruction* bp =
      body->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  Instruction* call = body->AddInstruction(
      Instruction::Create(Opcode::kCall, Shape(PrimitiveType::kF32, {2}), {bp}, "again"));
  body->set_root(call);
  Computation* loop = rec->AddComputation(std::move(body), true);
  Attribute to_apply;
  to_apply.name = "to_apply";
  to_apply.kind = Attribute::Kind::kComputations;
  to_apply.computations = {loop};
  call->AddAttribute(to_apply);
  Status cycle = VerifyModule(*rec);
  ASSERT_FALSE(cycle);
  EXPECT_TRUE(Contains(cycle.error().ToString(), "computation %loop: calls itself"));

  // A computation of another module.
  auto stranger = std::make_unique<hlo::Module>("stranger");
  auto sc = std::make_unique<Computation>("main");
  Instruction* sp =
      sc->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  Instruction* scall = sc->AddInstruction(
      Instruction::Create(Opcode::kCall, Shape(PrimitiveType::kF32, {2}), {sp}, "outside"));
  sc->set_root(scall);
  stranger->AddComputation(std::move(sc), true);
  scall->AddAttribute(to_apply);  // refers to `loop` of module `rec`
  Status outside = VerifyModule(*stranger);
  ASSERT_FALSE(outside);
  EXPECT_TRUE(Contains(outside.error().ToString(), "to_apply refers to computation %loop which is not in the module"));
}

TEST(VerifierTest, MixedPrecisionFollowsTheOption) {
  const std::string text = WithEntry(R"(
  x = f32[4] parameter(0)
  y = bf16[4] parameter(1)
  ROOT a = f32[4] add(x, y)
)");
  EXPECT_TRUE(Verifies(text));
  VerifierOptions strict;
  strict.allow_mixed_precision = false;
  EXPECT_TRUE(FailsAt(text, "a", "mixes floating-point precisions f32 and bf16", "main", strict));
  const std::string reduce = WithEntry(R"(
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
)");
  EXPECT_TRUE(Verifies(reduce));
  EXPECT_TRUE(FailsAt(reduce, "r", "does not match the expected f32[]", "main", strict));
}

TEST(VerifierTest, VerifyComputationChecksOneComputation) {
  std::unique_ptr<Module> m = Parse(WithEntry(R"(
  x = f32[2] parameter(0)
  ROOT n = f32[3] negate(x)
)"));
  ASSERT_TRUE(m);
  const Computation* add = m->FindComputation("add");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(VerifyComputation(*add));
  Status s = VerifyComputation(*m->entry());
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "instruction %n in computation %main"));
}

}  // namespace
}  // namespace kiln::hlo::verifier_testing
