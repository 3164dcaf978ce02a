// Unit tests of the HLO verifier (verifier.h): small modules parsed from text
// that must verify, and the shape inference the parser relies on.
#include "compiler/hlo/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/hlo/verifier_test_util.h"

namespace kiln::hlo::verifier_testing {
namespace {

// ---- Good modules -----------------------------------------------------------------

TEST(VerifierTest, AcceptsElementwiseAndDataMovement) {
  EXPECT_TRUE(Verifies(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  i = s32[2,3] parameter(2)
  a = f32[2,3] add(x, y)
  n = f32[2,3] negate(a)
  c = pred[2,3] compare(x, y), direction=LT
  s = f32[2,3] select(c, x, y)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  cl = f32[2,3] clamp(lo, x, hi)
  cv = s32[2,3] convert(x)
  bc = s32[2,3] bitcast-convert(x)
  sh = s32[2,3] shift-left(i, cv)
  fin = pred[2,3] is-finite(x)
  ab = f32[2,3] abs(n)
  b = f32[4,2,3] broadcast(x), dimensions={1,2}
  sb = f32[5] broadcast(lo), dimensions={}
  r = f32[6] reshape(x)
  t = f32[3,2] transpose(x), dimensions={1,0}
  rv = f32[2,3] reverse(x), dimensions={0,1}
  sl = f32[1,2] slice(x), slice={[1:2], [0:3:2]}
  k = s32[] constant(1)
  ds = f32[1,2] dynamic-slice(x, k, k), dynamic_slice_sizes={1,2}
  dus = f32[2,3] dynamic-update-slice(x, ds, k, k)
  cc = f32[2,9] concatenate(x, y, x), dimensions={1}
  p = f32[5,2] pad(x, lo), padding=1_2x0_-1
  pi = f32[3,5] pad(x, lo), padding=0_0_1x0_0_1
  io = s32[4,5] iota(), iota_dimension=1
  tup = (f32[2,3], s32[4,5]) tuple(x, io)
  g = s32[4,5] get-tuple-element(tup), index=1
  cx = c64[2,3] complex(x, y)
  re = f32[2,3] real(cx)
  ROOT out = (f32[2,3], f32[5,2], f32[3,5], f32[2,9], s32[4,5]) tuple(s, p, pi, cc, g)
)")));
}

TEST(VerifierTest, AcceptsContractionsReductionsAndControlFlow) {
  const std::string extra = R"(
cond {
  st = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  st = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  v = f32[4] get-tuple-element(st), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[4] add(v, v)
  ROOT out = (s32[], f32[4]) tuple(j, w)
}

branch_a {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

branch_b {
  p = f32[4] parameter(0)
  ROOT e = f32[4] exponential(p)
}

fused {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT m = f32[4] multiply(p0, p1)
}

argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
)";
  EXPECT_TRUE(Verifies(WithEntry(R"(
  x = f32[2,3,4] parameter(0)
  y = f32[2,4,5] parameter(1)
  v = f32[4] parameter(2)
  idx = s32[4] parameter(3)
  d = f32[2,3,5] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  outer = f32[4,4] dot(v, v)
  mixed = f32[2,3,5] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, operand_precision={high,highest}
  zero = f32[] constant(0)
  izero = s32[] constant(0)
  red = f32[3] reduce(x, zero), dimensions={0,2}, to_apply=add
  idx3 = s32[2,3,4] parameter(10)
  am = (f32[2,3], s32[2,3]) reduce(x, idx3, zero, izero), dimensions={2}, to_apply=argmax
  img = f32[1,8,8,2] parameter(4)
  ker = f32[3,3,2,4] parameter(5)
  conv = f32[1,4,4,4] convolution(img, ker), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  dw = f32[3,3,1,2] parameter(6)
  depthwise = f32[1,8,8,2] convolution(img, dw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  rw = f32[1,4,4,2] reduce-window(img, zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add
  src = f32[1,4,4,2] parameter(7)
  sas = f32[1,8,8,2] select-and-scatter(img, src, zero), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add
  st = (s32[], f32[4]) tuple(izero, v)
  w = (s32[], f32[4]) while(st), condition=cond, body=body
  pr = pred[] parameter(8)
  cd = f32[4] conditional(pr, v, v), true_computation=branch_a, false_computation=branch_b
  bi = s32[] parameter(9)
  cd2 = f32[4] conditional(bi, v, v, v), branch_computations={branch_a, branch_b, branch_a}
  cl = f32[4] call(v), to_apply=branch_a
  fu = f32[4] fusion(v, v), kind=kLoop, calls=fused
  mp = f32[4] map(v, v), dimensions={0}, to_apply=add
  so = f32[4] sort(v), dimensions={0}, to_apply=less
  so2 = (f32[4], s32[4]) sort(v, idx), dimensions={0}, is_stable=true, to_apply=less2
  ROOT out = (f32[2,3,5], f32[1,4,4,4], f32[4]) tuple(d, conv, fu)
)",
                                 extra + R"(
less2 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)")));
}

TEST(VerifierTest, AcceptsGatherAndScatter) {
  EXPECT_TRUE(Verifies(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
  idx2 = s32[2,3] parameter(2)
  g2 = f32[2,3,7] gather(operand, idx2), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,7}
  upd = f32[3,7] parameter(3)
  s = f32[5,7] scatter(operand, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  batched = f32[4,5,7] parameter(4)
  bidx = s32[4,3,1] parameter(5)
  bg = f32[4,3,7] gather(batched, bidx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,7}, operand_batching_dims={0}, start_indices_batching_dims={0}
  bupd = f32[4,3,7] parameter(6)
  bs = f32[4,5,7] scatter(batched, bidx, bupd), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, input_batching_dims={0}, scatter_indices_batching_dims={0}, to_apply=add
  ROOT out = (f32[3,7], f32[2,3,7], f32[5,7], f32[4,3,7], f32[4,5,7]) tuple(g, g2, s, bg, bs)
)")));
}

TEST(VerifierTest, DynamicDimensionsCompareLeniently) {
  EXPECT_TRUE(Verifies(WithEntry(R"(
  x = f32[<=8,3] parameter(0)
  y = f32[<=8,3] parameter(1)
  a = f32[<=8,3] add(x, y)
  w = f32[3,5] parameter(2)
  d = f32[<=8,5] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[8,5] parameter(3)
  mix = f32[<=8,5] add(d, s)
  u = f32[?,3] parameter(4)
  n = f32[?,3] negate(u)
  r = f32[<=24] reshape(x)
  b = f32[2,<=8,3] broadcast(x), dimensions={1,2}
  ROOT out = (f32[<=8,5], f32[?,3], f32[<=24], f32[2,<=8,3]) tuple(mix, n, r, b)
)")));
}

TEST(VerifierTest, EntryLayoutAndLineNumbers) {
  EXPECT_TRUE(Verifies(R"(HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{1,0}}

ENTRY main {
  x = f32[2,3]{0,1} parameter(0)
  ROOT c = f32[2,3] copy(x)
}
)"));
  std::unique_ptr<Module> m = Parse(R"(HloModule m

ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT n = f32[3,2] negate(x)
}
)");
  ASSERT_TRUE(m);
  Status s = VerifyModule(*m);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().ToString(), "instruction %n in computation %main (line 5): "));
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.error().where().line, 5);
  EXPECT_EQ(s.error().where().subject, "instruction %n in computation %main");
  EXPECT_FALSE(Contains(s.error().message, "line 5")) << "the place is apart: " << s.error().message;
}


// ---- Shape inference used by the parser -------------------------------------------

TEST(ShapeInferenceTest, InfersShapesOfUnwrittenInstructions) {
  std::unique_ptr<Module> m = Parse(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3,4] parameter(1)
  d = f32[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = f32[2] reduce(d, z), dimensions={1}, to_apply=add
  ROOT t = (f32[2,4], f32[2]) tuple(d, r)
)"));
  ASSERT_TRUE(m);
  for (const auto& instr : m->entry()->instructions()) {
    if (instr->opcode() == Opcode::kParameter) {
      Result<Shape> none = InferInstructionShape(*instr, nullptr);
      EXPECT_FALSE(none) << instr->name();
      continue;
    }
    Result<Shape> inferred = InferInstructionShape(*instr, nullptr);
    ASSERT_TRUE(inferred) << instr->name() << ": " << inferred.error().ToString();
    EXPECT_TRUE(ShapesCompatible(*inferred, instr->shape()))
        << instr->name() << ": " << inferred->ToString() << " vs " << instr->shape().ToString();
  }
}

TEST(ShapeInferenceTest, ParserInfersOmittedShapes) {
  std::unique_ptr<Module> m = Parse(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3,4] parameter(1)
  a = add(x, x)
  d = dot(a, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = reduce(d, z), dimensions={0}, to_apply=add
  b = broadcast(z), dimensions={}
  t = tuple(d, r, b)
  ROOT g = get-tuple-element(t), index=1
)"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->shape().ToString(), "f32[4]");
  EXPECT_TRUE(VerifyModule(*m));
  Result<std::unique_ptr<Module>> convert = ParseModule(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT c = convert(x)
)"), "convert.hlo");
  ASSERT_FALSE(convert);
  EXPECT_TRUE(Contains(convert.error().ToString(), "the shape of convert cannot be inferred"));
}

TEST(ShapeInferenceTest, LenientDynamicComparison) {
  Shape bounded(PrimitiveType::kF32, {8, 3});
  bounded.set_dynamic_dimension(0, true);
  Shape fixed(PrimitiveType::kF32, {5, 3});
  Shape other(PrimitiveType::kF32, {5, 4});
  EXPECT_TRUE(ShapesCompatible(bounded, fixed));
  EXPECT_FALSE(ShapesCompatible(bounded, other));
  EXPECT_FALSE(ShapesCompatible(fixed, Shape(PrimitiveType::kBF16, {5, 3})));
  EXPECT_TRUE(ShapesCompatible(fixed, Shape(PrimitiveType::kBF16, {5, 3}), true));
  Result<Shape> window = InferWindowOutputShape(Shape(PrimitiveType::kF32, {10}),
                                                Window{{WindowDimension{3, 2, 1, 1, 1, 1, false}}},
                                                PrimitiveType::kF32);
  ASSERT_TRUE(window);
  EXPECT_EQ(window->dimensions(0), 5);
}

}  // namespace
}  // namespace kiln::hlo::verifier_testing
