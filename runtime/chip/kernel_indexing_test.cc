// How a kernel's arrays follow its iteration space (kernel_indexing.h).
#include "runtime/chip/kernel_indexing.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/hlo/module.h"
#include "compiler/hlo/parser.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  auto module = hlo::ParseModule(text, "test.hlo");
  EXPECT_TRUE(module) << module.error().ToString();
  return module ? std::move(*module) : nullptr;
}

const Instruction* Named(const hlo::Module& module, std::string_view name) {
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// The entry's parameters in order, and its root (or the root tuple's elements).
struct Boundary {
  std::vector<const Instruction*> inputs;
  std::vector<const Instruction*> outputs;
};
Boundary EntryBoundary(const hlo::Module& module) {
  Boundary b;
  for (const Instruction* p : module.entry()->parameters()) b.inputs.push_back(p);
  const Instruction* root = module.entry()->root();
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* o : root->operands()) b.outputs.push_back(o);
  } else {
    b.outputs.push_back(root);
  }
  return b;
}

DimIndex Plain(int space_dim, int64_t extent) { return DimIndex{true, {IndexPart{space_dim, 1, extent}}}; }

TEST(KernelIndexingTest, TransposedOperandFollowsTheSpaceDimensionsItFeeds) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[8,8192,256] parameter(0)
  y = f32[8192,8,256] parameter(1)
  t = f32[8192,8,256] transpose(x), dimensions={1,0,2}
  ROOT a = f32[8192,8,256] add(t, y)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  EXPECT_EQ(k.extents, (std::vector<int64_t>{8192, 8, 256}));
  ASSERT_EQ(k.inputs.size(), 2u);
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(1, 8), Plain(0, 8192), Plain(2, 256)}));
  EXPECT_EQ(k.inputs[1], (ArrayIndex{Plain(0, 8192), Plain(1, 8), Plain(2, 256)}));
  // x lays 8192 out in its second-minor dimension: the space may block it.
  EXPECT_EQ(k.blockable, (std::vector<bool>{true, true, true}));
  // A block of (8, 8, 128) reads an (8, 8, 128) block of x, not all 8192 rows.
  std::vector<int64_t> blocks = {8, 8, 128};
  EXPECT_EQ(DimBlock(k.inputs[0][0], 8, blocks), 8);
  EXPECT_EQ(DimBlock(k.inputs[0][1], 8192, blocks), 8);
  EXPECT_EQ(DimBlock(k.inputs[0][2], 256, blocks), 128);
}

TEST(KernelIndexingTest, BroadcastOperandHasOnlyTheDimensionsItKeeps) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[64,256] parameter(0)
  bias = f32[256] parameter(1)
  bb = f32[64,256] broadcast(bias), dimensions={1}
  ROOT a = f32[64,256] add(x, bb)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  EXPECT_EQ(k.inputs[1], (ArrayIndex{Plain(1, 256)}));
}

TEST(KernelIndexingTest, ReshapeSplitsAndMergesDimensionsIntoParts) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[64,512] parameter(0)
  y = f32[64,8,64] parameter(1)
  r = f32[64,8,64] reshape(x)
  ROOT a = f32[64,8,64] add(r, y)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  ASSERT_EQ(k.inputs[0].size(), 2u);
  EXPECT_EQ(k.inputs[0][0], Plain(0, 64));
  EXPECT_EQ(k.inputs[0][1], (DimIndex{true, {IndexPart{1, 1, 8}, IndexPart{2, 1, 64}}}));
  // A (1, 2, 64) block of the space is 128 contiguous elements of x's rows.
  std::vector<int64_t> blocks = {1, 2, 64};
  EXPECT_EQ(DimBlock(k.inputs[0][1], 512, blocks), 128);

  // The other way: the space merges what the input splits.
  auto merged = Parse(R"(
HloModule m
ENTRY e {
  x = f32[64,8,64] parameter(0)
  r = f32[64,512] reshape(x)
  ROOT n = f32[64,512] negate(r)
})");
  ASSERT_NE(merged, nullptr);
  Boundary mb = EntryBoundary(*merged);
  KernelIndexing mk = IndexKernel(SpaceKind::kLoop, mb.outputs[0], mb.inputs, mb.outputs);
  EXPECT_EQ(mk.inputs[0], (ArrayIndex{Plain(0, 64), DimIndex{true, {IndexPart{1, 64, 8}}},
                                      DimIndex{true, {IndexPart{1, 1, 64}}}}));
  std::vector<int64_t> rows = {8, 256};
  EXPECT_EQ(DimBlock(mk.inputs[0][1], 8, rows), 4);
  EXPECT_EQ(DimBlock(mk.inputs[0][2], 64, rows), 64);
}

TEST(KernelIndexingTest, ReduceOverATransposedInputKeepsItsRowsAligned) {
  auto module = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,512] parameter(0)
  t = f32[512,1024] transpose(x), dimensions={1,0}
  z = f32[] constant(0)
  ROOT r = f32[512] reduce(t, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  const Instruction* reduce = module->entry()->root();
  KernelIndexing k = IndexKernel(SpaceKind::kReduce, reduce, b.inputs, b.outputs);
  EXPECT_EQ(k.extents, (std::vector<int64_t>{512, 1024}));
  EXPECT_EQ(k.sequential, (std::vector<bool>{false, true}));
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(1, 1024), Plain(0, 512)}));
  EXPECT_EQ(k.outputs[0], (ArrayIndex{Plain(0, 512)}));
}

TEST(KernelIndexingTest, DotOperandsFollowBatchMNK) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = bf16[4,256,1024] parameter(0)
  w = bf16[512,1024] parameter(1)
  bias = bf16[512] parameter(2)
  wt = bf16[1024,512] transpose(w), dimensions={1,0}
  d = bf16[4,256,512] dot(x, wt), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bb = bf16[4,256,512] broadcast(bias), dimensions={2}
  ROOT a = bf16[4,256,512] add(d, bb)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  const Instruction* dot = Named(*module, "d");
  KernelIndexing k = IndexKernel(SpaceKind::kContraction, dot, b.inputs, b.outputs);
  constexpr int kB = KernelIndexing::kBatch, kM = KernelIndexing::kM, kN = KernelIndexing::kN,
                kK = KernelIndexing::kK;
  (void)kB;
  EXPECT_EQ(k.extents, (std::vector<int64_t>{1, 1024, 512, 1024}));
  EXPECT_EQ(k.sequential, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(k.inputs[0], (ArrayIndex{DimIndex{true, {IndexPart{kM, 256, 4}}}, DimIndex{true, {IndexPart{kM, 1, 256}}},
                                     Plain(kK, 1024)}));
  // The transposed weight: rows follow n, columns k.
  EXPECT_EQ(k.inputs[1], (ArrayIndex{Plain(kN, 512), Plain(kK, 1024)}));
  EXPECT_EQ(k.inputs[2], (ArrayIndex{Plain(kN, 512)}));
  EXPECT_EQ(k.outputs[0][2], Plain(kN, 512));
}

TEST(KernelIndexingTest, SliceReadsOnlyTheSliceAndConcatenateOperandsAreNarrower) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[64,1024] parameter(0)
  y = f32[64,256] parameter(1)
  s = f32[64,256] slice(x), slice={[0:64], [0:256]}
  c = f32[64,512] concatenate(s, y), dimensions={1}
  ROOT n = f32[64,512] negate(c)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(0, 64), Plain(1, 1024)}));
  EXPECT_EQ(k.inputs[1], (ArrayIndex{Plain(0, 64), Plain(1, 256)}));
  std::vector<int64_t> blocks = {64, 128};
  EXPECT_EQ(DimBlock(k.inputs[0][1], 1024, blocks), 128);
}

TEST(KernelIndexingTest, BitcastRegroupsDimensionsInMemoryOrder) {
  // A layout-changing bitcast: the same bytes seen as the transposed shape.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[256,128]{1,0} parameter(0)
  b = f32[128,256]{0,1} bitcast(x)
  ROOT n = f32[128,256]{0,1} negate(b)
})");
  ASSERT_NE(module, nullptr);
  Boundary bd = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, bd.outputs[0], bd.inputs, bd.outputs);
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(1, 256), Plain(0, 128)}));
  EXPECT_EQ(PhysicalOrder(bd.outputs[0]->shape()), (std::vector<int64_t>{1, 0}));
}

TEST(KernelIndexingTest, MappingCrossesFusionBoundaries) {
  auto module = Parse(R"(
HloModule m
fused {
  p = f32[32,512] parameter(0)
  ROOT t = f32[512,32] transpose(p), dimensions={1,0}
}
ENTRY e {
  x = f32[32,512] parameter(0)
  y = f32[512,32] parameter(1)
  f = f32[512,32] fusion(x), kind=kLoop, calls=fused
  ROOT a = f32[512,32] add(f, y)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(1, 32), Plain(0, 512)}));
}

TEST(KernelIndexingTest, OpaqueProducersLeaveDimensionsUnknown) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  table = f32[1000,128] parameter(0)
  ids = s32[64,1] parameter(1)
  g = f32[64,128] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
  ROOT n = f32[64,128] negate(g)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  ASSERT_EQ(k.inputs[0].size(), 2u);
  EXPECT_FALSE(k.inputs[0][0].known);
  EXPECT_EQ(DimBlock(k.inputs[0][0], 1000, std::vector<int64_t>{8, 128}), 1000);
}

TEST(KernelIndexingTest, SiblingOutputsOfTheSpaceShapeFollowItThroughCalls) {
  // A called computation writes a broadcast mask and a broadcast constant:
  // the constant has no data path to the space, but is written by the same
  // loop; the mask's input is read once per value of the broadcast dim.
  auto module = Parse(R"(
HloModule m
where {
  m = pred[16,1,1,256] parameter(0)
  r = pred[16,1,256] reshape(m)
  b = pred[16,8,1,256] broadcast(r), dimensions={0,2,3}
  c = f32[] parameter(1)
  cb = bf16[] convert(c)
  f = bf16[16,8,1,256] broadcast(cb), dimensions={}
  ROOT t = (pred[16,8,1,256], bf16[16,8,1,256]) tuple(b, f)
}
ENTRY e {
  mask = pred[16,1,1,256] parameter(0)
  k = f32[] constant(-1)
  call = (pred[16,8,1,256], bf16[16,8,1,256]) call(mask, k), to_apply=where
  o0 = pred[16,8,1,256] get-tuple-element(call), index=0
  o1 = bf16[16,8,1,256] get-tuple-element(call), index=1
  ROOT out = (pred[16,8,1,256], bf16[16,8,1,256]) tuple(o0, o1)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  const DimIndex one{true, {}};
  EXPECT_EQ(k.inputs[0], (ArrayIndex{Plain(0, 16), one, one, Plain(3, 256)}));
  EXPECT_EQ(k.outputs[1], (ArrayIndex{Plain(0, 16), Plain(1, 8), one, Plain(3, 256)}));
}

// A loop over feature-minor activations ({1,0,3,2}: features along the
// lanes, the batch along the rows, spatial dimensions stacked above) walks
// the features along the lanes: its minor dimensions are the ones the
// space's array lays out minor, not its last logical two.
TEST(KernelIndexingTest, SpaceMinorDimensionsFollowTheAnchorsLayout) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[96,32,112,112]{1,0,3,2} parameter(0)
  ROOT n = f32[96,32,112,112]{1,0,3,2} negate(x)
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  EXPECT_EQ(k.blockable, (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(k.align, (std::vector<int64_t>{8, 128, 1, 1}));
  // The spatial dimensions stack whole (8,128) tiles of batch x features.
  EXPECT_EQ(k.stacked, (std::vector<bool>{false, false, true, true}));
}

// A depthwise convolution without a channel multiplier reads feature f of
// its input for feature f of its result: a block of features reads its own
// slice. Spatial dimensions follow the window.
TEST(KernelIndexingTest, DepthwiseConvolutionInputFollowsTheOutputFeatures) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[8,28,28,256] parameter(0)
  w = f32[3,3,1,256] parameter(1)
  ROOT c = f32[8,28,28,256] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=256
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  ASSERT_EQ(k.inputs.size(), 2u);
  EXPECT_EQ(k.inputs[0][3], Plain(3, 256));
  EXPECT_EQ(k.inputs[0][0], Plain(0, 8));
  std::vector<int64_t> blocks = {8, 28, 28, 128};
  EXPECT_EQ(DimBlock(k.inputs[0][3], 256, blocks), 128);
  EXPECT_EQ(DimBlock(k.inputs[1][3], 256, blocks), 128);
  // 8 result rows of a 3x3 window read 10 input rows.
  blocks = {8, 8, 28, 128};
  EXPECT_EQ(DimBlock(k.inputs[0][1], 28, blocks), 10);
}

// A depthwise convolution's weight gradient, as XLA writes it (the batch
// grouped per feature, the window the whole image): every result tap reads
// the whole image, so a block of taps reads all of both operands' rows.
TEST(KernelIndexingTest, AWeightGradientsWindowReadsTheWholeImage) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[96,144,56,56] parameter(0)
  g = f32[96,144,56,56] parameter(1)
  ROOT wg = f32[1,144,3,3] convolution(x, g), window={size=56x56 pad=1_1x1_1}, dim_labels=fb01_io01->bf01, batch_group_count=144
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  std::vector<int64_t> blocks = {1, 8, 1, 3};
  EXPECT_EQ(DimBlock(k.inputs[0][2], 56, blocks), 56);
  EXPECT_EQ(DimBlock(k.inputs[0][3], 56, blocks), 56);
}

// A 3x3 pool of stride 2 reads two input rows per result row and one more
// per block (its window's overlap): a block of 8 result rows reads 17 of
// its input, and the whole result the whole input.
TEST(KernelIndexingTest, AStridedWindowsOperandSpansItsStridePerIndex) {
  auto module = Parse(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8,112,112,128] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT p = f32[8,56,56,128] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=max
})");
  ASSERT_NE(module, nullptr);
  Boundary b = EntryBoundary(*module);
  KernelIndexing k = IndexKernel(SpaceKind::kLoop, b.outputs[0], b.inputs, b.outputs);
  ASSERT_EQ(k.inputs.size(), 1u);
  EXPECT_EQ(k.inputs[0][1], (DimIndex{true, {IndexPart{1, 1, 112, 2, 1}}}));
  EXPECT_EQ(k.inputs[0][3], Plain(3, 128));
  std::vector<int64_t> blocks = {1, 8, 56, 128};
  EXPECT_EQ(DimBlock(k.inputs[0][1], 112, blocks), 17);
  EXPECT_EQ(DimBlock(k.inputs[0][2], 112, blocks), 112);
}

}  // namespace
}  // namespace kiln::runtime
