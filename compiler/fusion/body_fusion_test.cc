#include "compiler/fusion/body_fusion.h"

#include <gtest/gtest.h>

#include <string_view>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "compiler/passes/pass_test_util.h"
#include "runtime/eval/evaluator.h"
#include "runtime/io/random_inputs.h"

namespace kiln::fusion {
namespace {

using passes::testing::ParseVerified;

// A scanned softmax: the body scales, squashes and normalises the carried
// rows four times.
constexpr std::string_view kSoftmaxLoop = R"(
HloModule loop
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
cond {
  p = (s32[], f32[64,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64,256] get-tuple-element(p), index=1
  c = f32[] constant(1.5)
  cb = f32[64,256] broadcast(c), dimensions={}
  m = f32[64,256] multiply(x, cb)
  t = f32[64,256] tanh(m)
  ninf = f32[] constant(-inf)
  mx = f32[64] reduce(t, ninf), dimensions={1}, to_apply=max
  mxb = f32[64,256] broadcast(mx), dimensions={0}
  d = f32[64,256] subtract(t, mxb)
  e = f32[64,256] exponential(d)
  z = f32[] constant(0)
  s = f32[64] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[64,256] broadcast(s), dimensions={0}
  y = f32[64,256] divide(e, sb)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[64,256]) tuple(i1, y)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64,256]) tuple(zero, x)
  w = (s32[], f32[64,256]) while(init), condition=cond, body=body
  ROOT out = f32[64,256] get-tuple-element(w), index=1
})";

// A branch computing a mean and a mean of squares of one value (a layer
// norm's statistics): sibling reductions, one multi-output fusion.
constexpr std::string_view kStatisticsBranch = R"(
HloModule branch
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
stats {
  x = f32[128,512] parameter(0)
  z = f32[] constant(0)
  sum = f32[128] reduce(x, z), dimensions={1}, to_apply=add
  sq = f32[128,512] multiply(x, x)
  sumsq = f32[128] reduce(sq, z), dimensions={1}, to_apply=add
  k = f32[] constant(0.001953125)
  kb = f32[128] broadcast(k), dimensions={}
  mean = f32[128] multiply(sum, kb)
  meansq = f32[128] multiply(sumsq, kb)
  ROOT r = (f32[128], f32[128]) tuple(mean, meansq)
}
zeros {
  x = f32[128,512] parameter(0)
  z = f32[] constant(0)
  zb = f32[128] broadcast(z), dimensions={}
  ROOT r = (f32[128], f32[128]) tuple(zb, zb)
}
ENTRY e {
  flag = pred[] parameter(0)
  x = f32[128,512] parameter(1)
  c = (f32[128], f32[128]) conditional(flag, x, x), true_computation=stats, false_computation=zeros
  ROOT out = f32[128] get-tuple-element(c), index=1
})";

PlannerOptions Options() {
  PlannerOptions options;
  options.tiling.scoped_vmem_bytes = 16 << 20;
  return options;
}

const hlo::Computation* Find(const hlo::Module& module, std::string_view name) {
  for (const auto& c : module.computations()) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

int64_t Count(const hlo::Computation& computation, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const auto& instr : computation.instructions()) n += instr->opcode() == opcode;
  return n;
}

// Fuses `text`; checks the result verifies, prints callees before callers
// and computes what the unfused module computes, bit for bit.
std::unique_ptr<hlo::Module> FuseAndCheck(std::string_view text, BodyFusionStats* stats, const BodyFlips& flips = {}) {
  auto module = ParseVerified(text);
  auto reference = ParseVerified(text);
  if (module == nullptr || reference == nullptr) return nullptr;
  Result<BodyFusionStats> fused = FuseControlFlowBodies(*module, Options(), flips);
  EXPECT_TRUE(fused.has_value()) << fused.error().ToString();
  if (!fused) return nullptr;
  *stats = *fused;
  Status verified = hlo::VerifyModule(*module);
  EXPECT_TRUE(verified.has_value()) << verified.error().ToString();
  const std::string printed = hlo::PrintModule(*module);
  EXPECT_TRUE(hlo::ParseModule(printed).has_value()) << printed;
  for (const auto& computation : module->computations()) {
    for (const auto& instr : computation->instructions()) {
      for (const hlo::Instruction* operand : instr->operands()) {
        EXPECT_LT(operand->index_in_parent(), instr->index_in_parent()) << instr->name();
      }
    }
  }
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* parameter : reference->entry()->parameters()) {
    Result<hlo::Literal> arg = runtime::io::RandomLiteral(parameter->shape(), 7 + args.size());
    EXPECT_TRUE(arg.has_value());
    if (!arg) return nullptr;
    if (parameter->shape().element_type() == hlo::PrimitiveType::kPred) {
      // Take the branch that does the work.
      Result<hlo::Literal> yes = hlo::ParseLiteral("pred[] true");
      if (yes) arg = std::move(*yes);
    }
    args.push_back(std::move(*arg));
  }
  Result<hlo::Literal> want = runtime::EvaluateModule(*reference, args);
  Result<hlo::Literal> got = runtime::EvaluateModule(*module, args);
  EXPECT_TRUE(want.has_value() && got.has_value());
  if (want && got) {
    EXPECT_TRUE(*want == *got);
  }
  return module;
}

TEST(BodyFusionTest, LoopBodyBecomesFusionsAndComputesTheSame) {
  BodyFusionStats stats;
  auto module = FuseAndCheck(kSoftmaxLoop, &stats);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(stats.computations, 2);  // body and condition
  const hlo::Computation* body = Find(*module, "body");
  ASSERT_NE(body, nullptr);
  // The heuristic's kernels: tanh(x * 1.5) with its max, exp(t - max) with
  // its sum, and e / sum. Each of t and e has two consumers: it is computed
  // once, in the kernel of its reduction, which also writes it for the
  // other consumer (producer-consumer multi-output fusion).
  EXPECT_EQ(Count(*body, hlo::Opcode::kFusion), 3);
  EXPECT_EQ(stats.fusions, 3);
  EXPECT_EQ(stats.fused_instructions, 10);
  EXPECT_EQ(Count(*body, hlo::Opcode::kReduce), 0);
  for (hlo::Opcode op : {hlo::Opcode::kMultiply, hlo::Opcode::kTanh, hlo::Opcode::kExp, hlo::Opcode::kDivide,
                         hlo::Opcode::kSubtract, hlo::Opcode::kBroadcast}) {
    EXPECT_EQ(Count(*body, op), 0) << hlo::OpcodeName(op);
  }
  // The entry and the reducers are as they were.
  EXPECT_EQ(module->entry()->instruction_count(), 5);
  EXPECT_EQ(Find(*module, "add")->instruction_count(), 3);
  EXPECT_EQ(Find(*module, "max")->instruction_count(), 3);
  // Fused computations are printed before the body that calls them.
  int64_t body_at = -1, last_fused_at = -1;
  for (size_t i = 0; i < module->computations().size(); ++i) {
    const auto& c = module->computations()[i];
    if (c.get() == body) body_at = static_cast<int64_t>(i);
    if (c->name().starts_with("fused_")) last_fused_at = static_cast<int64_t>(i);
  }
  EXPECT_LT(last_fused_at, body_at);
}

// The autotuner's body search: every profitability decision of the body
// flipped on its own still verifies and computes the same, each kernel is
// one step named after its fusion or its one instruction, and flips change
// the kernels.
TEST(BodyFusionTest, EachFlippedBodyDecisionComputesTheSameAndNamesItsSteps) {
  BodyFusionStats heuristic;
  ASSERT_NE(FuseAndCheck(kSoftmaxLoop, &heuristic), nullptr);
  const BodyDecisions* body = nullptr;
  for (const BodyDecisions& d : heuristic.decisions) body = d.computation == "body" ? &d : body;
  ASSERT_NE(body, nullptr);
  int flipped = 0, changed = 0;
  for (size_t e = 0; e < body->decisions.size(); ++e) {
    if (body->decisions[e].kind != DecisionKind::kProfitability) continue;
    BodyFusionStats stats;
    auto module = FuseAndCheck(kSoftmaxLoop, &stats, {{"body", {static_cast<int64_t>(e)}}});
    ASSERT_NE(module, nullptr) << "edge " << e;
    ++flipped;
    const BodyDecisions* planned = nullptr;
    for (const BodyDecisions& d : stats.decisions) planned = d.computation == "body" ? &d : planned;
    ASSERT_NE(planned, nullptr);
    EXPECT_NE(planned->decisions[e].fused, body->decisions[e].fused) << "edge " << e;
    std::vector<std::vector<int64_t>> before, after;
    for (const BodyKernel& k : body->kernels) before.push_back(k.instructions);
    for (const BodyKernel& k : planned->kernels) after.push_back(k.instructions);
    changed += before != after;  // a flip other edges outweigh changes none
    const hlo::Computation* fused_body = Find(*module, "body");
    for (const BodyKernel& k : planned->kernels) {
      if (k.step.empty()) continue;
      bool found = false;
      for (const auto& instr : fused_body->instructions()) found |= instr->name() == k.step;
      EXPECT_TRUE(found) << k.step;
      if (k.instructions.size() >= 2) EXPECT_TRUE(k.step.starts_with("fusion.")) << k.step;
    }
  }
  EXPECT_GT(flipped, 0);
  EXPECT_GT(changed, 0);
}

TEST(BodyFusionTest, FlipsThatCannotBeMadeAreRefusedByName) {
  auto module = ParseVerified(kSoftmaxLoop);
  ASSERT_NE(module, nullptr);
  Result<BodyFusionStats> unknown = FuseControlFlowBodies(*module, Options(), {{"nobody", {0}}});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().ToString().find("%nobody"), std::string::npos) << unknown.error().ToString();
  module = ParseVerified(kSoftmaxLoop);
  Result<BodyFusionStats> out_of_range = FuseControlFlowBodies(*module, Options(), {{"body", {100000}}});
  ASSERT_FALSE(out_of_range.has_value());
  EXPECT_NE(out_of_range.error().ToString().find("%body"), std::string::npos) << out_of_range.error().ToString();
}

TEST(BodyFusionTest, SiblingReductionsInABranchShareOneMultiOutputFusion) {
  BodyFusionStats stats;
  auto module = FuseAndCheck(kStatisticsBranch, &stats);
  ASSERT_NE(module, nullptr);
  const hlo::Computation* branch = Find(*module, "stats");
  ASSERT_NE(branch, nullptr);
  EXPECT_EQ(Count(*branch, hlo::Opcode::kReduce), 0);
  const hlo::Instruction* multi = nullptr;
  for (const auto& instr : branch->instructions()) {
    if (instr->opcode() == hlo::Opcode::kFusion && instr->shape().IsTuple()) multi = instr.get();
  }
  ASSERT_NE(multi, nullptr) << hlo::PrintModule(*module);
  EXPECT_EQ(*multi->AttributeText("kind"), "kInput");
  ASSERT_GE(multi->users().size(), 2u);
  for (const hlo::Instruction* user : multi->users()) EXPECT_EQ(user->opcode(), hlo::Opcode::kGetTupleElement);
  // The branch with nothing to fuse is unchanged.
  EXPECT_EQ(Count(*Find(*module, "zeros"), hlo::Opcode::kFusion), 0);
}

TEST(BodyFusionTest, InstructionsWithControlEdgesStayOutside) {
  auto module = ParseVerified(R"(
HloModule ordered
cond {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[1024] get-tuple-element(p), index=1
  a = f32[1024] negate(x)
  b = f32[1024] exponential(a), control-predecessors={i}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[1024]) tuple(i1, b)
}
ENTRY e {
  x = f32[1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024]) tuple(zero, x)
  w = (s32[], f32[1024]) while(init), condition=cond, body=body
  ROOT out = f32[1024] get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  Result<BodyFusionStats> fused = FuseControlFlowBodies(*module, Options());
  ASSERT_TRUE(fused.has_value()) << fused.error().ToString();
  const hlo::Computation* body = Find(*module, "body");
  EXPECT_EQ(Count(*body, hlo::Opcode::kFusion), 0);
  EXPECT_EQ(Count(*body, hlo::Opcode::kExp), 1);
  EXPECT_TRUE(hlo::VerifyModule(*module).has_value());
}

}  // namespace
}  // namespace kiln::fusion
