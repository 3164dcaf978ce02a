// Unit tests of the typed attribute decoders (op_attributes.h): the text
// parsers on their own and the Get* accessors on instructions of parsed
// modules, including their error messages.
#include "compiler/hlo/op_attributes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

// Succeeds when `text` contains `part`; prints both otherwise.
::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::unique_ptr<Module> ParseModuleText(std::string_view text) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, "test.hlo");
  EXPECT_TRUE(m.has_value()) << m.error().ToString();
  return m ? std::move(*m) : nullptr;
}

const Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// ---- Window ---------------------------------------------------------------

TEST(WindowTest, ParsesAllFields) {
  Result<Window> w = ParseWindow(
      "{size=3x2 stride=2x1 pad=1_0x-1_2 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}");
  ASSERT_TRUE(w) << w.error().ToString();
  ASSERT_EQ(w->dimensions.size(), 2u);
  EXPECT_EQ(w->dimensions[0], (WindowDimension{3, 2, 1, 0, 1, 3, false}));
  EXPECT_EQ(w->dimensions[1], (WindowDimension{2, 1, -1, 2, 2, 1, true}));
}

TEST(WindowTest, DefaultsAndOneDimensionalInts) {
  Result<Window> w = ParseWindow("{size=5 stride=2}");
  ASSERT_TRUE(w) << w.error().ToString();
  ASSERT_EQ(w->dimensions.size(), 1u);
  EXPECT_EQ(w->dimensions[0], (WindowDimension{5, 2, 0, 0, 1, 1, false}));
  Result<Window> padded = ParseWindow("{size=3 pad=0_2}");
  ASSERT_TRUE(padded) << padded.error().ToString();
  EXPECT_EQ(padded->dimensions[0].padding_high, 2);
}

TEST(WindowTest, RejectsMalformedWindows) {
  Result<Window> no_size = ParseWindow("{stride=2x2}");
  ASSERT_FALSE(no_size);
  EXPECT_TRUE(Contains(no_size.error().ToString(), "no size"));
  Result<Window> mismatch = ParseWindow("{size=3x3 pad=1_1}");
  ASSERT_FALSE(mismatch);
  EXPECT_TRUE(Contains(mismatch.error().ToString(), "pad has 1 entries but size has 2"));
  EXPECT_FALSE(ParseWindow("{size=3x3 bogus=1x1}"));
  EXPECT_FALSE(ParseWindow("{size=3x3 rhs_reversal=2x0}"));
  EXPECT_FALSE(ParseWindow("size=3"));
}

// ---- Slices and padding -------------------------------------------------------

TEST(SliceSpecTest, ParsesStartsLimitsAndStrides) {
  Result<SliceSpec> s = ParseSliceSpec("{[0:2],[1:9:3],[4:4]}");
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->starts, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(s->limits, (std::vector<int64_t>{2, 9, 4}));
  EXPECT_EQ(s->strides, (std::vector<int64_t>{1, 3, 1}));
  Result<SliceSpec> empty = ParseSliceSpec("{}");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->starts.empty());
}

TEST(SliceSpecTest, RejectsMalformedSlices) {
  EXPECT_FALSE(ParseSliceSpec("{[0]}"));
  EXPECT_FALSE(ParseSliceSpec("{[0:1:2:3]}"));
  EXPECT_FALSE(ParseSliceSpec("{[0:1]"));
  EXPECT_FALSE(ParseSliceSpec("[0:1]"));
}

TEST(PaddingConfigTest, ParsesNegativeAndInteriorPadding) {
  Result<PaddingConfig> p = ParsePaddingConfig("0_1x-2_3_4");
  ASSERT_TRUE(p) << p.error().ToString();
  ASSERT_EQ(p->dimensions.size(), 2u);
  EXPECT_EQ(p->dimensions[0], (PaddingDimension{0, 1, 0}));
  EXPECT_EQ(p->dimensions[1], (PaddingDimension{-2, 3, 4}));
  EXPECT_FALSE(ParsePaddingConfig("1x2"));
  EXPECT_FALSE(ParsePaddingConfig("{1_1}"));
}

// ---- Convolution dimension numbers ----------------------------------------------

TEST(ConvolutionDimensionNumbersTest, ParsesStandardLabels) {
  Result<ConvolutionDimensionNumbers> d = ParseConvolutionDimensionNumbers("b01f_01io->b01f");
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->input_batch_dimension, 0);
  EXPECT_EQ(d->input_feature_dimension, 3);
  EXPECT_EQ(d->input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d->kernel_input_feature_dimension, 2);
  EXPECT_EQ(d->kernel_output_feature_dimension, 3);
  EXPECT_EQ(d->kernel_spatial_dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(d->output_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d->input_rank, 4);
}

TEST(ConvolutionDimensionNumbersTest, ParsesPermutedAndUnknownLabels) {
  Result<ConvolutionDimensionNumbers> d = ParseConvolutionDimensionNumbers("f10b_i01o->10bf");
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->input_feature_dimension, 0);
  EXPECT_EQ(d->input_batch_dimension, 3);
  EXPECT_EQ(d->input_spatial_dimensions, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(d->output_spatial_dimensions, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(d->output_feature_dimension, 3);

  Result<ConvolutionDimensionNumbers> q = ParseConvolutionDimensionNumbers("b0?f_0io->b0f");
  ASSERT_TRUE(q) << q.error().ToString();
  EXPECT_EQ(q->input_rank, 4);
  EXPECT_EQ(q->input_feature_dimension, 3);
  EXPECT_EQ(q->output_rank, 3);

  Result<ConvolutionDimensionNumbers> none = ParseConvolutionDimensionNumbers("bf_io->bf");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->input_spatial_dimensions.empty());
}

TEST(ConvolutionDimensionNumbersTest, RejectsInconsistentLabels) {
  Result<ConvolutionDimensionNumbers> dup = ParseConvolutionDimensionNumbers("b00f_01io->b01f");
  ASSERT_FALSE(dup);
  EXPECT_TRUE(Contains(dup.error().ToString(), "lhs dimension labels repeats spatial dimension 0"));
  EXPECT_FALSE(ParseConvolutionDimensionNumbers("b01_01io->b01f"));   // no f
  EXPECT_FALSE(ParseConvolutionDimensionNumbers("b02f_01io->b01f"));  // gap in spatial dims
  EXPECT_FALSE(ParseConvolutionDimensionNumbers("b01f_0io->b01f"));   // spatial counts differ
  EXPECT_FALSE(ParseConvolutionDimensionNumbers("b01f_01xo->b01f"));
  EXPECT_FALSE(ParseConvolutionDimensionNumbers("b01f"));
}

// ---- Replica groups -------------------------------------------------------------

TEST(ReplicaGroupsTest, ExplicitAndIotaForms) {
  using Groups = std::vector<std::vector<int64_t>>;
  Result<Groups> explicit_groups = ParseReplicaGroups("{{0,1},{2,3}}");
  ASSERT_TRUE(explicit_groups);
  EXPECT_EQ(*explicit_groups, (Groups{{0, 1}, {2, 3}}));
  Result<Groups> all = ParseReplicaGroups("{}");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->empty());
  Result<Groups> iota = ParseReplicaGroups("[2,4]<=[8]");
  ASSERT_TRUE(iota) << iota.error().ToString();
  EXPECT_EQ(*iota, (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  Result<Groups> transposed = ParseReplicaGroups("[2,4]<=[4,2]T(1,0)");
  ASSERT_TRUE(transposed) << transposed.error().ToString();
  EXPECT_EQ(*transposed, (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  Result<Groups> three = ParseReplicaGroups("[4,2]<=[2,2,2]T(2,1,0)");
  ASSERT_TRUE(three) << three.error().ToString();
  EXPECT_EQ(*three, (Groups{{0, 4}, {2, 6}, {1, 5}, {3, 7}}));
  EXPECT_FALSE(ParseReplicaGroups("[2,4]<=[7]"));
  EXPECT_FALSE(ParseReplicaGroups("[2,4]<=[4,2]T(0,0)"));
}

// ---- Accessors on parsed instructions ---------------------------------------------

constexpr std::string_view kModule = R"(
HloModule attrs

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  p = f32[4,8] parameter(0)
  ROOT n = f32[4,8] negate(p)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[8,16] parameter(1)
  idx = s32[3,1] parameter(2)
  upd = f32[3,8] parameter(3)
  dot = f32[4,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bdot = f32[4,4] dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  cmp = pred[4,8] compare(x, x), direction=GE
  cmpt = pred[4,8] compare(x, x), direction=LT, type=TOTALORDER
  g = f32[3,8] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  sc = f32[4,8] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  t = f32[8,4] transpose(x), dimensions={1,0}
  tup = (f32[4,8], f32[8,16]) tuple(x, y)
  gte = f32[8,16] get-tuple-element(tup), index=1
  f = f32[4,8] fusion(x), kind=kLoop, calls=fused
  ar = f32[4,8] all-reduce(x), replica_groups=[2,2]<=[4], channel_id=7, to_apply=add
  cp = f32[4,8] collective-permute(x), source_target_pairs={{0,1},{1,0}}
  srt = f32[4,8] sort(x), dimensions={1}, is_stable=true, to_apply=add
  ROOT r = (f32[4,16], f32[3,8]) tuple(dot, g)
}
)";

TEST(AccessorTest, DotDimensionNumbers) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<DotDimensionNumbers> d = GetDotDimensionNumbers(*Find(*m, "dot"));
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_TRUE(d->lhs_batch_dimensions.empty());
  EXPECT_EQ(d->lhs_contracting_dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(d->rhs_contracting_dimensions, (std::vector<int64_t>{0}));
  Result<DotDimensionNumbers> b = GetDotDimensionNumbers(*Find(*m, "bdot"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(b->rhs_batch_dimensions, (std::vector<int64_t>{0}));
}

TEST(AccessorTest, ComparisonDirectionAndType) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<Comparison> c = GetComparison(*Find(*m, "cmp"));
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->direction, ComparisonDirection::kGe);
  EXPECT_EQ(c->type, ComparisonType::kFloat);
  EXPECT_FALSE(c->type_explicit);
  Result<Comparison> t = GetComparison(*Find(*m, "cmpt"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->direction, ComparisonDirection::kLt);
  EXPECT_EQ(t->type, ComparisonType::kTotalOrder);
  EXPECT_TRUE(t->type_explicit);
  EXPECT_EQ(DefaultComparisonType(PrimitiveType::kS8), ComparisonType::kSigned);
  EXPECT_EQ(DefaultComparisonType(PrimitiveType::kU32), ComparisonType::kUnsigned);
  EXPECT_EQ(DefaultComparisonType(PrimitiveType::kPred), ComparisonType::kUnsigned);
  EXPECT_EQ(ComparisonDirectionFromName("NE"), ComparisonDirection::kNe);
  EXPECT_EQ(ComparisonDirectionName(ComparisonDirection::kLe), "LE");
}

TEST(AccessorTest, GatherAndScatterDimensionNumbers) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<GatherDimensionNumbers> g = GetGatherDimensionNumbers(*Find(*m, "g"));
  ASSERT_TRUE(g) << g.error().ToString();
  EXPECT_EQ(g->offset_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g->collapsed_slice_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(g->start_index_map, (std::vector<int64_t>{0}));
  EXPECT_EQ(g->index_vector_dim, 1);
  EXPECT_TRUE(g->operand_batching_dims.empty());
  Result<std::vector<int64_t>> sizes = GetGatherSliceSizes(*Find(*m, "g"));
  ASSERT_TRUE(sizes);
  EXPECT_EQ(*sizes, (std::vector<int64_t>{1, 8}));
  Result<ScatterDimensionNumbers> s = GetScatterDimensionNumbers(*Find(*m, "sc"));
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->update_window_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(s->inserted_window_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(s->scatter_dims_to_operand_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(s->index_vector_dim, 1);
}

TEST(AccessorTest, SmallAttributes) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<std::vector<int64_t>> dims = GetDimensions(*Find(*m, "t"));
  ASSERT_TRUE(dims);
  EXPECT_EQ(*dims, (std::vector<int64_t>{1, 0}));
  Result<int64_t> index = GetTupleIndex(*Find(*m, "gte"));
  ASSERT_TRUE(index);
  EXPECT_EQ(*index, 1);
  Result<FusionKind> kind = GetFusionKind(*Find(*m, "f"));
  ASSERT_TRUE(kind);
  EXPECT_EQ(*kind, FusionKind::kLoop);
  Result<const Computation*> fused = GetCalledComputation(*Find(*m, "f"), "calls");
  ASSERT_TRUE(fused);
  EXPECT_EQ((*fused)->name(), "fused");
  Result<SortConfig> sort = GetSortConfig(*Find(*m, "srt"));
  ASSERT_TRUE(sort);
  EXPECT_EQ(sort->dimension, 1);
  EXPECT_TRUE(sort->is_stable);
  Result<int64_t> fgc = GetFeatureGroupCount(*Find(*m, "dot"));
  ASSERT_TRUE(fgc);
  EXPECT_EQ(*fgc, 1);  // default
}

TEST(AccessorTest, CollectiveAttributes) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<std::vector<std::vector<int64_t>>> groups = GetReplicaGroups(*Find(*m, "ar"));
  ASSERT_TRUE(groups) << groups.error().ToString();
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  Result<std::optional<int64_t>> channel = GetChannelId(*Find(*m, "ar"));
  ASSERT_TRUE(channel);
  EXPECT_EQ(*channel, 7);
  Result<std::optional<int64_t>> no_channel = GetChannelId(*Find(*m, "cp"));
  ASSERT_TRUE(no_channel);
  EXPECT_FALSE(no_channel->has_value());
  auto pairs = GetSourceTargetPairs(*Find(*m, "cp"));
  ASSERT_TRUE(pairs);
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0], (std::pair<int64_t, int64_t>{0, 1}));
}

TEST(AccessorTest, ErrorsNameTheInstructionAndAttribute) {
  auto m = ParseModuleText(kModule);
  ASSERT_TRUE(m);
  Result<std::vector<int64_t>> missing = GetDimensions(*Find(*m, "dot"));
  ASSERT_FALSE(missing);
  EXPECT_TRUE(Contains(missing.error().ToString(), "instruction %dot: attribute dimensions: missing"));
  Result<Window> no_window = GetWindow(*Find(*m, "dot"));  // optional: empty window
  ASSERT_TRUE(no_window);
  EXPECT_TRUE(no_window->dimensions.empty());
  Result<int64_t> single = GetSingleDimension(*Find(*m, "t"));
  ASSERT_FALSE(single);
  EXPECT_TRUE(Contains(single.error().ToString(), "expected exactly one dimension, got 2"));
  Result<const Computation*> not_a_ref = GetCalledComputation(*Find(*m, "t"), "dimensions");
  ASSERT_FALSE(not_a_ref);
  EXPECT_TRUE(Contains(not_a_ref.error().ToString(), "expected computation references"));
  Result<ConvolutionDimensionNumbers> no_labels = GetConvolutionDimensionNumbers(*Find(*m, "dot"));
  ASSERT_FALSE(no_labels);
  EXPECT_TRUE(Contains(no_labels.error().ToString(), "attribute dim_labels: missing"));
}

TEST(AccessorTest, WindowPaddingAndSliceOnInstructions) {
  auto m = ParseModuleText(R"(
HloModule w
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,8] parameter(0)
  zero = f32[] constant(0)
  rw = f32[4,4] reduce-window(x, zero), window={size=2x2 stride=2x2}, to_apply=add
  p = f32[10,7] pad(x, zero), padding=1_1x0_-1
  ROOT sl = f32[2,4] slice(x), slice={[0:2], [0:8:2]}
}
)");
  ASSERT_TRUE(m);
  Result<Window> w = GetWindow(*Find(*m, "rw"));
  ASSERT_TRUE(w) << w.error().ToString();
  ASSERT_EQ(w->dimensions.size(), 2u);
  EXPECT_EQ(w->dimensions[1].stride, 2);
  Result<PaddingConfig> p = GetPaddingConfig(*Find(*m, "p"));
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->dimensions[1], (PaddingDimension{0, -1, 0}));
  Result<SliceSpec> s = GetSliceSpec(*Find(*m, "sl"));
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->strides, (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace kiln::hlo
