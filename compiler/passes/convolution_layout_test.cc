#include "compiler/passes/convolution_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/operand_order.h"
#include "compiler/passes/pass_pipeline.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;
using testing::FindInstruction;
using testing::ParseVerified;

using Layout = std::vector<int64_t>;

Layout FeatureMinor(PrimitiveType type, std::vector<int64_t> dims, int64_t feature, int64_t batch) {
  return FeatureMinorLayout(Shape(type, std::move(dims)), feature, batch);
}

const Layout& LayoutOf(const hlo::Module& module, const char* name) {
  const hlo::Instruction* instr = FindInstruction(module, name);
  EXPECT_NE(instr, nullptr) << name;
  static const Layout kNone;
  return instr != nullptr ? instr->shape().layout().minor_to_major : kNone;
}

TEST(ConvolutionLayoutTest, FeaturesGoMinorAndTheBatchNextWhenItFillsTheTileRows) {
  // torch_xla's NCHW: features minor, batch second-minor, spatial major.
  EXPECT_EQ(FeatureMinor(PrimitiveType::kF32, {96, 32, 56, 56}, 1, 0), (Layout{1, 0, 3, 2}));
  // NHWC: the TPU's {3,0,2,1}.
  EXPECT_EQ(FeatureMinor(PrimitiveType::kF32, {8, 56, 56, 64}, 3, 0), (Layout{3, 0, 2, 1}));
  // A batch of 4 fills half of each 8-row tile; 14 columns pad to 16.
  EXPECT_EQ(FeatureMinor(PrimitiveType::kF32, {4, 64, 14, 14}, 1, 0), (Layout{1, 3, 2, 0}));
  // bf16 tiles have 16 rows: a batch of 8 pads, 56 columns do not.
  EXPECT_EQ(FeatureMinor(PrimitiveType::kBF16, {8, 64, 56, 56}, 1, 0), (Layout{1, 3, 2, 0}));
  // Labels in other places: b01f input, f01b-like orders.
  EXPECT_EQ(FeatureMinor(PrimitiveType::kF32, {32, 7, 7, 16}, 0, 3), (Layout{0, 3, 2, 1}));
}

// A MobileNet-v2 block as torch_xla emits it (NCHW, 7x7 maps): expand,
// relu, depthwise 3x3, project, residual.
constexpr char kBlock[] = R"(HloModule block
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w1 = f32[32,8,1,1] parameter(1)
  c1 = f32[16,32,7,7] convolution(x, w1), window={size=1x1}, dim_labels=bf01_oi01->bf01
  zero = f32[] constant(0)
  zs = f32[16,32,7,7] broadcast(zero), dimensions={}
  r1 = f32[16,32,7,7] maximum(c1, zs)
  wd = f32[32,1,3,3] parameter(2)
  c2 = f32[16,32,7,7] convolution(r1, wd), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=32
  w3 = f32[8,32,1,1] parameter(3)
  c3 = f32[16,8,7,7] convolution(c2, w3), window={size=1x1}, dim_labels=bf01_oi01->bf01
  ROOT out = f32[16,8,7,7] add(c3, x)
})";

std::vector<hlo::Literal> BlockArguments() {
  std::vector<hlo::Literal> args;
  int salt = 0;
  for (const Shape& shape : {Shape(PrimitiveType::kF32, {16, 8, 7, 7}), Shape(PrimitiveType::kF32, {32, 8, 1, 1}),
                             Shape(PrimitiveType::kF32, {32, 1, 3, 3}), Shape(PrimitiveType::kF32, {8, 32, 1, 1})}) {
    hlo::Literal arg(shape);
    ++salt;
    for (int64_t i = 0; i < arg.element_count(); ++i) {
      arg.Set<float>(i, static_cast<float>((i * 7 + salt * 3) % 17) * 0.125f - 1.0f);
    }
    args.push_back(std::move(arg));
  }
  return args;
}

TEST(ConvolutionLayoutTest, ActivationsAndWhatTheyAreComputedWithGoFeatureMinor) {
  auto module = ParseVerified(kBlock);
  ASSERT_NE(module, nullptr);
  auto changed = AssignConvolutionLayouts(*module->entry());
  ASSERT_TRUE(changed) << changed.error().ToString();
  EXPECT_TRUE(*changed);
  const Layout nchw_tpu = {1, 0, 3, 2};
  for (const char* name : {"c1", "zs", "r1", "c2", "c3"}) EXPECT_EQ(LayoutOf(*module, name), nchw_tpu) << name;
  // The caller's arrays keep their layouts: parameters and the root.
  for (const char* name : {"x", "w1", "out"}) {
    EXPECT_TRUE(FindInstruction(*module, name)->shape().has_default_layout()) << name;
  }
  // The first convolution reads its parameter through a transposing copy;
  // the residual add reads the parameter itself.
  const hlo::Instruction* c1 = FindInstruction(*module, "c1");
  ASSERT_EQ(c1->operand(0)->opcode(), hlo::Opcode::kCopy);
  EXPECT_EQ(c1->operand(0)->shape().layout().minor_to_major, nchw_tpu);
  EXPECT_EQ(c1->operand(0)->operand(0), FindInstruction(*module, "x"));
  EXPECT_EQ(FindInstruction(*module, "out")->operand(1), FindInstruction(*module, "x"));
  // Done: a second run changes nothing.
  auto again = AssignConvolutionLayouts(*module->entry());
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST(ConvolutionLayoutTest, LayoutsChangeHowValuesAreStoredNotWhatTheyAre) {
  auto before = ParseVerified(kBlock);
  auto after = ParseVerified(kBlock);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(LayoutAssignment().Run(*after).value_or(false));
  // The inserted copy was appended; the pipeline restores this order.
  ASSERT_TRUE(PlaceOperandsFirst(*after));
  const std::vector<hlo::Literal> args = BlockArguments();
  testing::ExpectSameResults(*before, *after, args);
}

TEST(ConvolutionLayoutTest, ValuesBitcastsOrTuplesReadKeepTheirLayout) {
  auto module = ParseVerified(R"(HloModule pinned
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w = f32[8,8,1,1] parameter(1)
  c = f32[16,8,7,7] convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
  n = f32[16,8,7,7] negate(c)
  b = f32[16,8,49] bitcast(n)
  e2 = f32[16,8,7,7] exponential(c)
  given = f32[16,8,7,7]{3,2,0,1} sqrt(c)
  ROOT t = (f32[16,8,49], f32[16,8,7,7], f32[16,8,7,7]) tuple(b, e2, given)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(AssignConvolutionLayouts(*module->entry()).value_or(false));
  EXPECT_EQ(LayoutOf(*module, "c"), (Layout{1, 0, 3, 2}));
  for (const char* name : {"n", "e2"}) EXPECT_TRUE(FindInstruction(*module, name)->shape().has_default_layout()) << name;
  EXPECT_EQ(LayoutOf(*module, "given"), (Layout{3, 2, 0, 1}));
}

TEST(ConvolutionLayoutTest, ConvolutionsReadingOneValueShareItsCopy) {
  auto module = ParseVerified(R"(HloModule shared
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w = f32[8,8,1,1] parameter(1)
  v = f32[8,8,1,1] parameter(2)
  a = f32[16,8,7,7] convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
  b = f32[16,8,7,7] convolution(x, v), window={size=1x1}, dim_labels=bf01_oi01->bf01
  ROOT s = f32[16,8,7,7] add(a, b)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(AssignConvolutionLayouts(*module->entry()).value_or(false));
  const hlo::Instruction* a = FindInstruction(*module, "a");
  const hlo::Instruction* b = FindInstruction(*module, "b");
  EXPECT_EQ(a->operand(0)->opcode(), hlo::Opcode::kCopy);
  EXPECT_EQ(a->operand(0), b->operand(0));
}

TEST(ConvolutionLayoutTest, AWeightGradientReadsTheForwardActivationsAsTheyLie) {
  // dw contracts r over its batch (labelled as the feature): its own choice
  // would put the batch minor, but r is the forward convolution's group.
  auto module = ParseVerified(R"(HloModule wgrad
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  w = f32[8,8,1,1] parameter(1)
  g = f32[16,32,7,7] parameter(2)
  c = f32[16,8,7,7] convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01
  zero = f32[] constant(0)
  zs = f32[16,8,7,7] broadcast(zero), dimensions={}
  r = f32[16,8,7,7] maximum(c, zs)
  ROOT dw = f32[8,32,1,1] convolution(r, g), window={size=7x7}, dim_labels=fb01_io01->bf01
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(AssignConvolutionLayouts(*module->entry()).value_or(false));
  EXPECT_EQ(LayoutOf(*module, "r"), (Layout{1, 0, 3, 2}));
  EXPECT_EQ(FindInstruction(*module, "dw")->operand(0), FindInstruction(*module, "r"));
  // Kernels (here the gradient) are read as they lie: only inputs are laid out.
  EXPECT_EQ(FindInstruction(*module, "dw")->operand(1), FindInstruction(*module, "g"));
}

TEST(ConvolutionLayoutTest, AParameterWithItsFeaturesMinorIsReadAsItLies) {
  // NHWC: the features are already minor; no copy for the batch's place.
  auto module = ParseVerified(R"(HloModule nhwc
ENTRY e {
  x = f16[128,56,56,4] parameter(0)
  w = f16[64,7,7,4] parameter(1)
  ROOT c = f16[128,64,28,28]{1,3,2,0} convolution(x, w), dim_labels=b01f_o01i->bf01, window={size=7x7 stride=2x2 pad=3_3x3_3}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(AssignConvolutionLayouts(*module->entry()).value_or(true));
  EXPECT_EQ(FindInstruction(*module, "c")->operand(0), FindInstruction(*module, "x"));
}

TEST(ConvolutionLayoutTest, TheDefaultPipelineLaysOutConvolutions) {
  auto module = ParseVerified(kBlock);
  ASSERT_NE(module, nullptr);
  auto ran = MakeDefaultPipeline().Run(*module);
  ASSERT_TRUE(ran) << ran.error().ToString();
  EXPECT_EQ(LayoutOf(*module, "c2"), (Layout{1, 0, 3, 2}));
}

}  // namespace
}  // namespace kiln::passes
