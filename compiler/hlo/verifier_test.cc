// Unit tests of the HLO verifier: small modules parsed from text (or built
// through the IR API where text cannot express the defect) that must verify,
// and one bad module per kind of defect whose error must name the right
// instruction and say what is wrong.
#include "compiler/hlo/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo {
namespace {

::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Scalar reducers and comparators shared by the modules below.
constexpr std::string_view kHelpers = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}
)";

// A module with the helpers and an entry computation `main` with `body`.
std::string WithEntry(std::string_view body, std::string_view extra = "") {
  return "HloModule test\n" + std::string(kHelpers) + std::string(extra) + "\nENTRY main {\n" +
         std::string(body) + "\n}\n";
}

std::unique_ptr<Module> Parse(const std::string& text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().message << "\n" << text;
  return m ? std::move(*m) : nullptr;
}

::testing::AssertionResult Verifies(const std::string& text, VerifierOptions options = {}) {
  std::unique_ptr<Module> m = Parse(text);
  if (!m) return ::testing::AssertionFailure() << "does not parse";
  Status s = VerifyModule(*m, options);
  if (s) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.error().message << "\n" << text;
}

// Verification fails, naming `instruction` (in computation `computation`)
// and containing `what`.
::testing::AssertionResult FailsAt(const std::string& text, std::string_view instruction,
                                   std::string_view what, std::string_view computation = "main",
                                   VerifierOptions options = {}) {
  std::unique_ptr<Module> m = Parse(text);
  if (!m) return ::testing::AssertionFailure() << "does not parse";
  Status s = VerifyModule(*m, options);
  if (s) return ::testing::AssertionFailure() << "verified but should not:\n" << text;
  const std::string where =
      "instruction %" + std::string(instruction) + " in computation %" + std::string(computation);
  ::testing::AssertionResult r = Contains(s.error().message, where);
  if (!r) return r;
  return Contains(s.error().message, what);
}

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
  EXPECT_TRUE(Contains(s.error().message, "instruction %n in computation %main (line 5): "));
}

// ---- Bad shapes, one per opcode family ----------------------------------------------

TEST(VerifierTest, RejectsDotContractingMismatch) {
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  a = f32[4,17] parameter(0)
  b = f32[16,8] parameter(1)
  ROOT dot.3 = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
      "dot.3",
      "lhs contracting dimension 1 has size 17 but rhs contracting dimension 0 has size 16"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[2,4,8] parameter(0)
  b = f32[3,8,5] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
)"),
                      "d",
                      "lhs batch dimension 0 has size 2 but rhs batch dimension 0 has size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
)"),
                      "d", "lhs_contracting_dims {2} has dimension 2 out of range for rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[5,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
                      "d", "result shape f32[5,4] does not match the expected f32[4,5]"));
}

TEST(VerifierTest, RejectsElementwiseMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  ROOT a = f32[2,3] add(x, y)
)"),
                      "a", "implicit broadcast is not allowed"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = s32[2,3] parameter(1)
  ROOT a = f32[2,3] multiply(x, y)
)"),
                      "a", "different element types"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] compare(x, x), direction=EQ
)"),
                      "c", "does not match the expected pred[2,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT c = pred[2,3] compare(x, x), direction=XX
)"),
                      "c", "attribute direction"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[2,3] parameter(0)
  ROOT c = pred[2,3] compare(x, x), direction=EQ, type=UNSIGNED
)"),
                      "c", "comparison type UNSIGNED"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  p = pred[] parameter(0)
  x = f32[2,3] parameter(1)
  ROOT s = f32[2,3] select(p, x, x)
)"),
                      "s", "select predicate pred[] must have the dimensions of f32[2,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  lo = f32[3] parameter(1)
  ROOT c = f32[2,3] clamp(lo, x, x)
)"),
                      "c", "clamp bounds must be scalars or match the operand"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[4] parameter(0)
  ROOT f = s32[4] floor(x)
)"),
                      "f", "floor expects floating-point operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = s32[3] convert(x)
)"),
                      "c", "does not match the expected s32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = s16[4] bitcast-convert(x)
)"),
                      "c", "does not match the expected s16[4,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s8[4,3] parameter(0)
  ROOT c = s32[4] bitcast-convert(x)
)"),
                      "c", "needs a last dimension of size 4"));
}

TEST(VerifierTest, RejectsDataMovementMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[3,4] broadcast(x), dimensions={0,1}
)"),
                      "b", "operand dimension 0 has size 2 but result dimension 0 has size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,3,4] broadcast(x), dimensions={0,7}
)"),
                      "b", "out of range for rank 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,3,4] broadcast(x)
)"),
                      "b", "attribute dimensions: missing"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[7] reshape(x)
)"),
                      "r", "reshape changes the element count from 6 (f32[2,3]) to 7 (f32[7])"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(x), dimensions={1,1}
)"),
                      "t", "repeats a dimension"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT t = f32[2,3] transpose(x), dimensions={1,0}
)"),
                      "t", "does not match the expected f32[3,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={2}
)"),
                      "r", "out of range"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT s = f32[2,2] slice(x), slice={[0:2], [2:4]}
)"),
                      "s", "slice dimension 1 [2:4:1] exceeds the operand dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  ROOT s = f32[2] slice(x), slice={[0:2]}
)"),
                      "s", "slice has 1 dimensions but the operand f32[2,3] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  k = s32[] constant(0)
  ROOT d = f32[2,4] dynamic-slice(x, k, k), dynamic_slice_sizes={2,4}
)"),
                      "d",
                      "dynamic-slice size 4 of dimension 1 exceeds the operand dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  k = s32[] constant(0)
  ROOT d = f32[1,1] dynamic-slice(x, k), dynamic_slice_sizes={1,1}
)"),
                      "d",
                      "dynamic-slice has 1 start indices but the operand f32[2,3] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  u = f32[3,3] parameter(1)
  k = s32[] constant(0)
  ROOT d = f32[2,3] dynamic-update-slice(x, u, k, k)
)"),
                      "d", "update dimension 0 of size 3 exceeds the operand dimension size 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  y = f32[3,3] parameter(1)
  ROOT c = f32[2,6] concatenate(x, y), dimensions={1}
)"),
                      "c", "differs from operand 0 f32[2,3] in dimension 0"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[2,0] pad(x, z), padding=0_0x-2_-2
)"),
                      "p", "padding makes dimension 1 negative"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  ROOT i = s32[4,5] iota(), iota_dimension=2
)"),
                      "i", "iota_dimension 2 is out of range"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  t = (f32[2], f32[2]) tuple(x, x)
  ROOT g = f32[2] get-tuple-element(t), index=2
)"),
                      "g", "tuple index 2 is out of range for (f32[2], f32[2])"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  ROOT g = f32[2] get-tuple-element(x), index=0
)"),
                      "g", "is not a tuple"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2] parameter(0)
  ROOT t = (f32[2], f32[3]) tuple(x, x)
)"),
                      "t", "does not match the expected (f32[2], f32[2])"));
}

TEST(VerifierTest, RejectsConvolutionMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,3] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
)"),
                      "c",
                      "lhs feature dimension has size 3, which divided by feature_group_count 1 "
                      "must equal the rhs input feature size 2"));
  EXPECT_TRUE(
      FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
)"),
              "c", "window size 2 of spatial dimension 0 does not match the rhs dimension size 3"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f
)"),
                      "c", "does not match the expected f32[1,6,6,4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[4,8,8,2] parameter(0)
  ker = f32[3,3,2,6] parameter(1)
  ROOT c = f32[1,6,6,6] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=4
)"),
                      "c", "must be divisible by feature_group_count 1 and batch_group_count 4"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01ff
)"),
                      "c", "repeats 'f'"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  img = f32[1,8,2] parameter(0)
  ker = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f
)"),
                      "c", "lhs f32[1,8,2] does not have the rank 4 of its dimension labels"));
}

TEST(VerifierTest, RejectsReductionMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=less
)"),
                      "r", "reducer parameter 0 f32[] differs from its result pred[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={0}, to_apply=add
)"),
                      "r", "does not match the expected f32[3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={3}, to_apply=add
)"),
                      "r", "reduce dimensions {3} has dimension 3 out of range for rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z, z), dimensions={0}, to_apply=add
)"),
                      "r", "even, non-zero number of operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = s32[2,3] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(x, z), dimensions={0}, to_apply=add
)"),
                      "r", "init value 0 s32[] differs from the reducer result f32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=1x1}, to_apply=add
)"),
                      "r", "does not match the expected f32[3,3]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2 stride=2}, to_apply=add
)"),
                      "r", "window has 1 dimensions but the operand f32[4,4] has rank 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4,4] parameter(0)
  src = f32[3,3] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[4,4] select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
)"),
                      "s", "source f32[3,3] does not match the windowed operand shape f32[2,2]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT m = f32[4] map(x), dimensions={0}, to_apply=add
)"),
                      "m", "map computation takes 2 parameters but map has 1 operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=add
)"),
                      "s", "sort comparator must return pred[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={1}, to_apply=less
)"),
                      "s", "sort dimension 1 is out of range"));
}

TEST(VerifierTest, RejectsGatherAndScatterMismatches) {
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,7}
)"),
                      "g", "collapsed or batching dimension 0 must have slice size 0 or 1, has 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,2] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "start_index_map {0} has 1 entries but the index vector has size 2"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = f32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "gather indices must be integers"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(operand, idx), offset_dims={1}, collapsed_slice_dims={0}, index_vector_dim=1, slice_sizes={1,7}
)"),
                      "g", "attribute start_index_map: missing"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[4,7] parameter(2)
  ROOT s = f32[5,7] scatter(operand, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)"),
      "s", "updates scatter dimension 0 has size 4 but the matching indices dimension has size 3"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[5,7] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3,8] parameter(2)
  ROOT s = f32[5,7] scatter(operand, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)"),
      "s", "updates window dimension 1 has size 8, larger than operand dimension 1 of size 7"));
  EXPECT_TRUE(FailsAt(
      WithEntry(R"(
  operand = f32[4,5,7] parameter(0)
  idx = s32[3,3,1] parameter(1)
  ROOT g = f32[3,3,7] gather(operand, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,7}, operand_batching_dims={0}, start_indices_batching_dims={0}
)"),
      "g", "operand batching dimension 0 has size 4 but indices batching dimension 0 has size 3"));
}

TEST(VerifierTest, RejectsControlFlowAndCallMismatches) {
  const std::string loops = R"(
bad_cond {
  st = f32[4] parameter(0)
  ROOT z = s32[] constant(0)
}

cond {
  st = f32[4] parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  st = f32[4] parameter(0)
  ROOT r = f32[3] slice(st), slice={[0:3]}
}

same_body {
  st = f32[4] parameter(0)
  ROOT n = f32[4] negate(st)
}

branch {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

fused {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
)";
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT w = f32[4] while(x), condition=bad_cond, body=same_body
)",
                                loops),
                      "w", "while condition must return pred[], returns s32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT w = f32[4] while(x), condition=cond, body=body
)",
                                loops),
                      "w", "body result f32[3] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[3] parameter(0)
  ROOT w = f32[3] while(x), condition=cond, body=same_body
)",
                                loops),
                      "w", "operand f32[3] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  s = f32[] parameter(1)
  ROOT c = f32[4] conditional(s, x, x), true_computation=branch, false_computation=branch
)",
                                loops),
                      "c", "selector must be pred[] or s32[], got f32[]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  y = f32[5] parameter(1)
  i = s32[] parameter(2)
  ROOT c = f32[4] conditional(i, x, y), branch_computations={branch, branch}
)",
                                loops),
                      "c", "operand 2 f32[5] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x, x), to_apply=branch
)",
                                loops),
                      "c",
                      "computation %branch takes 1 parameters but the instruction has 2 operands"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[5] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
)",
                                loops),
                      "f", "operand 0 (parameter of %fused) f32[5] does not match f32[4]"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kSideways, calls=fused
)",
                                loops),
                      "f", "attribute kind"));
  EXPECT_TRUE(FailsAt(WithEntry(R"(
  x = f32[4] parameter(0)
  ROOT f = f32[5] fusion(x), kind=kLoop, calls=fused
)",
                                loops),
                      "f", "does not match the expected f32[4]"));
}

// ---- Structure ------------------------------------------------------------------------

TEST(VerifierTest, RejectsParameterGapsAndDuplicates) {
  std::unique_ptr<Module> gap = Parse(WithEntry(R"(
  x = f32[2] parameter(0)
  y = f32[2] parameter(2)
  ROOT a = f32[2] add(x, y)
)"));
  ASSERT_TRUE(gap);
  Status s = VerifyModule(*gap);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().message, "computation %main: parameter number 1 is missing"));
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
  EXPECT_TRUE(Contains(s.error().message, "entry_computation_layout result f16[2,3]"));
  EXPECT_TRUE(Contains(s.error().message, "does not match the root %c of shape f32[2,3]"));
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
  EXPECT_TRUE(Contains(s2.error().message, "has 2 parameters but entry computation %main has 1"));
}

TEST(VerifierTest, RejectsCycleThroughControlPredecessors) {
  Result<std::unique_ptr<Module>> m = ParseModule(WithEntry(R"(
  x = f32[2] parameter(0)
  a = f32[2] negate(x), control-predecessors={b}
  b = f32[2] negate(a)
  ROOT r = f32[2] add(a, b)
)"),
                                                  "cycle.hlo");
  if (!m) GTEST_SKIP() << "parser rejects forward control predecessors: " << m.error().message;
  Status s = VerifyModule(**m);
  ASSERT_FALSE(s);
  EXPECT_TRUE(Contains(s.error().message, "is part of a cycle"));
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
  EXPECT_TRUE(Contains(missing.error().message, "parameter number 0 is missing"));

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
  EXPECT_TRUE(Contains(foreign_root.error().message, "root %q is not an instruction of it"));
  main2->set_root(nullptr);
  Status no_root = VerifyModule(*m2);
  ASSERT_FALSE(no_root);
  EXPECT_TRUE(Contains(no_root.error().message, "computation %main: has no root instruction"));

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
  EXPECT_TRUE(Contains(
      cross.error().message,
      "instruction %sum in computation %main: operand 1 %q is not in the same computation"));

  // No entry, and no computations at all.
  hlo::Module empty("empty");
  Status no_entry = VerifyModule(empty);
  ASSERT_FALSE(no_entry);
  EXPECT_TRUE(Contains(no_entry.error().message, "has no entry computation"));
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
  EXPECT_TRUE(
      Contains(arity.error().message,
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
  EXPECT_TRUE(Contains(cycle.error().message, "computation %loop: calls itself"));

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
  EXPECT_TRUE(Contains(outside.error().message,
                       "to_apply refers to computation %loop which is not in the module"));
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
  EXPECT_TRUE(Contains(s.error().message, "instruction %n in computation %main"));
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
    ASSERT_TRUE(inferred) << instr->name() << ": " << inferred.error().message;
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
  EXPECT_TRUE(Contains(convert.error().message, "the shape of convert cannot be inferred"));
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
}  // namespace kiln::hlo
