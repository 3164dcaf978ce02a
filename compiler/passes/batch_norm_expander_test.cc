#include "compiler/passes/batch_norm_expander.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/passes/pass_test_util.h"
#include "runtime/eval/evaluator.h"

namespace kiln::passes {
namespace {

using hlo::Literal;
using hlo::Opcode;
using hlo::PrimitiveType;
using testing::ParseVerified;

bool Expanded(const Result<bool>& r) { return r.has_value() && *r; }

int CountOps(const hlo::Module& module, Opcode op) {
  int n = 0;
  for (const auto& instr : module.entry()->instructions()) n += instr->opcode() == op;
  return n;
}

// Deterministic values in about [-1, 1] (bf16-exact), one stream per
// parameter; `positive` for variances.
Literal TestValues(const hlo::Shape& shape, uint32_t seed, bool positive) {
  Literal lit(shape);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    s = s * 1664525u + 1013904223u;
    float v = static_cast<float>(static_cast<int>((s >> 16) % 256) - 128) / 128.0f;
    if (positive) v = std::fabs(v) + 0.25f;
    if (shape.element_type() == PrimitiveType::kBF16) {
      lit.Set<uint16_t>(i, static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16));
    } else {
      lit.Set<float>(i, v);
    }
  }
  return lit;
}

// Runs the expander on a copy of `text` and compares both modules' values
// on the same arguments, element by element within `tolerance` (relative
// to max(1, |want|)). Parameters named var* get positive values.
void ExpectSameValues(const std::string& text, double tolerance) {
  auto before = ParseVerified(text);
  auto after = ParseVerified(text);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(Expanded(BatchNormExpander().Run(*after)));
  for (Opcode op : {Opcode::kBatchNormTraining, Opcode::kBatchNormInference, Opcode::kBatchNormGrad}) {
    for (const auto& instr : after->entry()->instructions()) {
      // Expanded ops have no users left (DCE removes them in the pipeline).
      if (instr->opcode() == op) EXPECT_TRUE(instr->users().empty()) << instr->name();
    }
  }
  ASSERT_TRUE(hlo::VerifyModule(*after).has_value());
  // Operands come before their users: the planner relies on it.
  for (const auto& instr : after->entry()->instructions()) {
    for (const hlo::Instruction* operand : instr->operands()) {
      EXPECT_LT(operand->index_in_parent(), instr->index_in_parent()) << instr->name();
    }
  }
  std::vector<Literal> args;
  uint32_t seed = 1;
  for (const auto& instr : before->entry()->instructions()) {
    if (instr->opcode() != Opcode::kParameter) continue;
    args.push_back(TestValues(instr->shape(), seed++, instr->name().starts_with("var")));
  }
  auto want = runtime::EvaluateModule(*before, args);
  auto got = runtime::EvaluateModule(*after, args);
  ASSERT_TRUE(want) << want.error().ToString();
  ASSERT_TRUE(got) << got.error().ToString();
  std::vector<const Literal*> w = {&*want}, g = {&*got};
  if (want->shape().IsTuple()) {
    w.clear();
    g.clear();
    for (const Literal& e : want->tuple_elements()) w.push_back(&e);
    for (const Literal& e : got->tuple_elements()) g.push_back(&e);
  }
  ASSERT_EQ(w.size(), g.size());
  for (size_t k = 0; k < w.size(); ++k) {
    ASSERT_TRUE(w[k]->shape().SameDimensions(g[k]->shape())) << k;
    for (int64_t i = 0; i < w[k]->element_count(); ++i) {
      const double a = w[k]->GetAsDouble(i), b = g[k]->GetAsDouble(i);
      ASSERT_NEAR(a, b, tolerance * std::max(1.0, std::fabs(a))) << "output " << k << " element " << i;
    }
  }
}

// Statistics over three dimensions (batch and two spatial), per channel.
TEST(BatchNormExpanderTest, TrainingBecomesTwoReductionsAndKeepsItsValues) {
  const std::string text = R"(HloModule bn
ENTRY e {
  x = f32[4,3,5,6] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[4,3,5,6], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
})";
  ExpectSameValues(text, 1e-5);
  auto module = ParseVerified(text);
  ASSERT_TRUE(Expanded(BatchNormExpander().Run(*module)));
  EXPECT_EQ(CountOps(*module, Opcode::kReduce), 2);
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kTuple);
}

TEST(BatchNormExpanderTest, InferenceKeepsItsValues) {
  ExpectSameValues(R"(HloModule bn
ENTRY e {
  x = f32[2,8,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  var = f32[3] parameter(4)
  ROOT y = f32[2,8,3] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, feature_index=2
})", 1e-5);
}

TEST(BatchNormExpanderTest, GradKeepsItsValues) {
  ExpectSameValues(R"(HloModule bn
ENTRY e {
  x = f32[4,3,5,6] parameter(0)
  scale = f32[3] parameter(1)
  mean = f32[3] parameter(2)
  var = f32[3] parameter(3)
  dy = f32[4,3,5,6] parameter(4)
  ROOT g = (f32[4,3,5,6], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1
})", 1e-4);
}

// torch_xla's layer norm: bf16, statistics per token over the hidden
// dimension, computed in f32 and rounded once.
TEST(BatchNormExpanderTest, Bf16LayerNormIsComputedInF32) {
  const std::string text = R"(HloModule ln
ENTRY e {
  x = bf16[1,16,96] parameter(0)
  scale = bf16[16] parameter(1)
  offset = bf16[16] parameter(2)
  bn = (bf16[1,16,96], bf16[16], bf16[16]) batch-norm-training(x, scale, offset), epsilon=1e-12, feature_index=1
  y = bf16[1,16,96] get-tuple-element(bn), index=0
  ROOT out = bf16[1,16,96] add(y, x)
})";
  ExpectSameValues(text, 2e-2);  // a few bf16 ulps: both round once from wider values
  auto module = ParseVerified(text);
  ASSERT_TRUE(Expanded(BatchNormExpander().Run(*module)));
  for (const auto& instr : module->entry()->instructions()) {
    if (instr->opcode() == Opcode::kReduce) EXPECT_EQ(instr->shape().element_type(), PrimitiveType::kF32);
  }
}

TEST(BatchNormExpanderTest, LeavesModulesWithoutBatchNormsAlone) {
  auto module = ParseVerified(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  ASSERT_NE(module, nullptr);
  auto changed = BatchNormExpander().Run(*module);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace kiln::passes
