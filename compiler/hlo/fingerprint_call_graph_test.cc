// The fingerprint's walk over the call graph: which computations it lists,
// and that a cyclic graph (which the verifier rejects, but the fingerprint
// may be given) fails with an error instead of recursing without end.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_test_util.h"

namespace kiln::hlo {
namespace {

using fingerprint_testing::Fp;

// %outer calls %inner; %unused is called by nobody.
constexpr std::string_view kNested = R"(
HloModule nested

%unused (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %n = f32[] negate(%x)
}

%inner (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %e = f32[] exponential(%x)
}

%outer (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %c = f32[] call(%x), to_apply=%inner
}

ENTRY %main {
  %p = f32[] parameter(0)
  %a = f32[] call(%p), to_apply=%outer
  ROOT %b = f32[] call(%a), to_apply=%inner
}
)";

TEST(FingerprintCallGraphTest, ListsComputationsReachedThroughCalleesInModuleOrder) {
  const Fingerprint fp = Fp(kNested);
  std::vector<std::string> names;
  for (const CalledComputationHash& c : fp.called_computations) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"inner", "outer"}));
}

// Adds a computation %name whose root is a call; SetCallee says what it calls.
Computation* AddCallingComputation(Module& module, const std::string& name, bool is_entry) {
  auto comp = std::make_unique<Computation>(name);
  Instruction* p =
      comp->AddInstruction(Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, {2}), "p"));
  comp->set_root(comp->AddInstruction(
      Instruction::Create(Opcode::kCall, Shape(PrimitiveType::kF32, {2}), {p}, "call")));
  return module.AddComputation(std::move(comp), is_entry);
}

void SetCallee(Computation* caller, Computation* callee) {
  Attribute to_apply;
  to_apply.name = "to_apply";
  to_apply.kind = Attribute::Kind::kComputations;
  to_apply.computations = {callee};
  caller->root()->AddAttribute(to_apply);
}

TEST(FingerprintCallGraphTest, ComputationCallingItselfFails) {
  Module module("self");
  Computation* loop = AddCallingComputation(module, "loop", /*is_entry=*/true);
  SetCallee(loop, loop);
  Result<Fingerprint> fp = FingerprintModule(module, {});
  ASSERT_FALSE(fp.has_value());
  EXPECT_NE(fp.error().message.find("computation %loop calls itself"), std::string::npos)
      << fp.error().message;
}

TEST(FingerprintCallGraphTest, CycleThroughAnotherComputationFails) {
  Module module("cycle");
  Computation* a = AddCallingComputation(module, "a", /*is_entry=*/false);
  Computation* b = AddCallingComputation(module, "b", /*is_entry=*/false);
  Computation* main = AddCallingComputation(module, "main", /*is_entry=*/true);
  SetCallee(main, a);
  SetCallee(a, b);
  SetCallee(b, a);
  Result<Fingerprint> fp = FingerprintModule(module, {});
  ASSERT_FALSE(fp.has_value());
  EXPECT_NE(fp.error().message.find("call graph is cyclic: computation %b calls %a"),
            std::string::npos)
      << fp.error().message;
}

}  // namespace
}  // namespace kiln::hlo
