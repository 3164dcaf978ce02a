#include "compiler/passes/pass_pipeline.h"

#include <gtest/gtest.h>

#include "compiler/hlo/shape.h"
#include "compiler/passes/operand_order.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using testing::FindInstruction;
using testing::ParseVerified;

constexpr char kPipelineModule[] = R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  ones = f32[4] broadcast(one), dimensions={}
  a = f32[4] multiply(x, ones)
  b = f32[4] exponential(a)
  c = f32[4] exponential(x)
  ROOT r = f32[4] add(b, c)
})";

TEST(PassPipelineTest, DefaultPipelineSimplifiesMergesAndCleansUp) {
  auto module = ParseVerified(kPipelineModule);
  ASSERT_NE(module, nullptr);
  PipelineOptions options;
  options.verify = true;
  PassPipeline pipeline = MakeDefaultPipeline(options);
  auto changed = pipeline.Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_TRUE(*changed);
  // x*1 -> x, then exp(x) twice -> once, then the leftovers are dead.
  const hlo::Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(FindInstruction(*module, "ones"), nullptr);
  EXPECT_EQ(module->entry()->instruction_count(), 3);
  EXPECT_FALSE(pipeline.changed_passes().empty());
}

// A broken pass: gives the root a shape its operands do not produce.
class CorruptingPass : public Pass {
 public:
  std::string_view name() const override { return "corrupt"; }
  Result<bool> Run(hlo::Module& module) override {
    module.entry()->root()->set_shape(hlo::Shape(hlo::PrimitiveType::kF32, {5}));
    return true;
  }
};

class FailingPass : public Pass {
 public:
  std::string_view name() const override { return "failing"; }
  Result<bool> Run(hlo::Module&) override { return UnimplementedError("cannot do this"); }
};

TEST(PassPipelineTest, VerifierBetweenPassesNamesTheBrokenPass) {
  auto module = ParseVerified(kPipelineModule);
  ASSERT_NE(module, nullptr);
  PipelineOptions options;
  options.verify = true;
  PassPipeline pipeline(options);
  pipeline.Add<CorruptingPass>();
  auto result = pipeline.Run(*module);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().ToString().find("after pass corrupt:"), std::string::npos) << result.error();
  EXPECT_EQ(result.error().code, ErrorCode::kInternal) << "a pass that breaks the module is a bug";
}

TEST(PassPipelineTest, PassErrorsAreReturnedWithThePassName) {
  auto module = ParseVerified(kPipelineModule);
  ASSERT_NE(module, nullptr);
  PassPipeline pipeline;
  pipeline.Add<FailingPass>();
  auto result = pipeline.Run(*module);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "pass failing: cannot do this");
  EXPECT_EQ(result.error().code, ErrorCode::kUnimplemented) << "the pass's code is kept";
}

// Appends negate(x) at the end of the entry and makes the root's first
// operand use it: the new instruction comes after its user.
class AppendingPass : public Pass {
 public:
  std::string_view name() const override { return "append"; }
  Result<bool> Run(hlo::Module& module) override {
    if (done_) return false;
    done_ = true;
    hlo::Computation& entry = *module.entry();
    hlo::Instruction* root = entry.root();
    hlo::Instruction* x = entry.parameters()[0];
    hlo::Instruction* b = root->operand(0);
    hlo::Instruction* neg = entry.AddInstruction(hlo::Instruction::Create(hlo::Opcode::kNegate, x->shape(), {x}, "neg"));
    KILN_RETURN_IF_ERROR(b->ReplaceOperandWith(0, neg));
    return true;
  }

 private:
  bool done_ = false;
};

TEST(PassPipelineTest, InstructionsAPassAppendsArePlacedBeforeTheirUsers) {
  auto module = ParseVerified(kPipelineModule);
  ASSERT_NE(module, nullptr);
  PipelineOptions options;
  options.verify = true;
  PassPipeline pipeline(options);
  pipeline.Add<AppendingPass>();
  auto changed = pipeline.Run(*module);
  ASSERT_TRUE(changed.has_value()) << changed.error();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(OperandsComeFirst(*module->entry()));
  const hlo::Instruction* neg = FindInstruction(*module, "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_LT(neg->index_in_parent(), FindInstruction(*module, "b")->index_in_parent());
  // Instructions already in order keep their relative order.
  EXPECT_LT(FindInstruction(*module, "c")->index_in_parent(), FindInstruction(*module, "r")->index_in_parent());
  EXPECT_EQ(FindInstruction(*module, "x")->index_in_parent(), 0);
}

TEST(PassPipelineTest, OperandOrderIsLeftAloneWhenItHolds) {
  auto module = ParseVerified(kPipelineModule);
  ASSERT_NE(module, nullptr);
  auto changed = PlaceOperandsFirst(*module);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace kiln::passes
