// Typed views of an Instruction's opcode-specific attributes.
//
// The parser keeps attributes as canonical text (attribute.h); the functions
// here decode the ones the verifier, the op evaluator and the compiler read:
// windows, slices, padding, convolution/dot/gather/scatter dimension
// numbers, comparison directions, replica groups and the small scalar and
// list attributes. Every Get* function reads one instruction and returns the
// decoded value by value, or an Error naming the attribute and the
// instruction ("instruction %conv.1: attribute window: pad has 1 entries but
// size has 2"). A missing optional attribute yields its XLA default; a
// missing required one is an error. Decoding checks syntax and internal
// consistency only (e.g. dim_labels uniqueness), not consistency with operand
// shapes: that is the verifier's job (verifier.h).
//
// Pure functions over immutable inputs; thread-safe. No pointers into the
// instruction are returned except Computation* references, which the module
// owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

// ---- Generic accessors --------------------------------------------------

// Required integer attribute (`index=1`).
Result<int64_t> GetIntAttribute(const Instruction& instr, std::string_view name);
// Optional integer attribute; `default_value` when absent.
Result<int64_t> GetIntAttributeOr(const Instruction& instr, std::string_view name,
                                  int64_t default_value);
// Optional boolean attribute (`is_stable=true`); `default_value` when absent.
Result<bool> GetBoolAttributeOr(const Instruction& instr, std::string_view name,
                                bool default_value);
// Optional floating-point attribute (`epsilon=0.001`).
Result<double> GetFloatAttributeOr(const Instruction& instr, std::string_view name,
                                   double default_value);
// Required `{1,2,3}` list.
Result<std::vector<int64_t>> GetIntListAttribute(const Instruction& instr, std::string_view name);
// Optional `{1,2,3}` list; empty when absent.
Result<std::vector<int64_t>> GetIntListAttributeOr(const Instruction& instr, std::string_view name);
// Required string attribute (`custom_call_target="foo"`), unescaped.
Result<std::string> GetStringAttribute(const Instruction& instr, std::string_view name);
// Required bare identifier (`direction=LT`, `kind=kLoop`): its text.
Result<std::string> GetIdentifierAttribute(const Instruction& instr, std::string_view name);
// The single computation an attribute refers to (`to_apply=%add`).
Result<const Computation*> GetCalledComputation(const Instruction& instr, std::string_view name);
// All computations an attribute refers to (`branch_computations={%a, %b}`).
Result<std::vector<const Computation*>> GetCalledComputations(const Instruction& instr,
                                                              std::string_view name);

// ---- Common single attributes -------------------------------------------

// `dimensions={...}` (broadcast, transpose, reverse, reduce, map, ...).
Result<std::vector<int64_t>> GetDimensions(const Instruction& instr);
// `dimensions={d}` holding exactly one value (concatenate, sort,
// get/set-dimension-size, all-gather, reduce-scatter).
Result<int64_t> GetSingleDimension(const Instruction& instr);
// `index=N` of get-tuple-element.
Result<int64_t> GetTupleIndex(const Instruction& instr);
// `iota_dimension=N` of iota.
Result<int64_t> GetIotaDimension(const Instruction& instr);
// `dynamic_slice_sizes={...}` of dynamic-slice.
Result<std::vector<int64_t>> GetDynamicSliceSizes(const Instruction& instr);
// `feature_group_count=` / `batch_group_count=` of convolution; default 1.
Result<int64_t> GetFeatureGroupCount(const Instruction& instr);
Result<int64_t> GetBatchGroupCount(const Instruction& instr);
// `channel_id=N`, nullopt when absent.
Result<std::optional<int64_t>> GetChannelId(const Instruction& instr);

// ---- Windows (convolution, reduce-window, select-and-scatter) -----------

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;     // lhs_dilate
  int64_t window_dilation = 1;   // rhs_dilate
  bool window_reversal = false;  // rhs_reversal
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

// Parses `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1
// rhs_reversal=0x0}`; `size` is required, the others default per dimension.
Result<Window> ParseWindow(std::string_view text);
// The `window=` attribute; an empty Window when absent (XLA's default, used
// for rank-0 reduce-window).
Result<Window> GetWindow(const Instruction& instr);

// ---- Slices and padding ---------------------------------------------------

struct SliceSpec {
  std::vector<int64_t> starts;
  std::vector<int64_t> limits;
  std::vector<int64_t> strides;  // 1 where not written
  bool operator==(const SliceSpec&) const = default;
};
// Parses `{[0:2],[1:3:2]}`.
Result<SliceSpec> ParseSliceSpec(std::string_view text);
Result<SliceSpec> GetSliceSpec(const Instruction& instr);  // `slice=`, required

struct PaddingDimension {
  int64_t edge_low = 0;   // may be negative
  int64_t edge_high = 0;  // may be negative
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
  bool operator==(const PaddingConfig&) const = default;
};
// Parses `0_1x-1_2_1` (low_high[_interior] per dimension, 'x'-separated).
Result<PaddingConfig> ParsePaddingConfig(std::string_view text);
Result<PaddingConfig> GetPaddingConfig(const Instruction& instr);  // `padding=`, required

// ---- Convolution ------------------------------------------------------------

// Decoded `dim_labels=b01f_01io->b01f`. Each *_rank is the number of
// characters of that part (a `?` marks a dimension that takes no part in the
// convolution). Spatial dimension i of every part is the position of digit i.
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 1;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 1;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 1;
  std::vector<int64_t> output_spatial_dimensions;
  int64_t input_rank = 2;
  int64_t kernel_rank = 2;
  int64_t output_rank = 2;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};
Result<ConvolutionDimensionNumbers> ParseConvolutionDimensionNumbers(std::string_view text);
// `dim_labels=`, required.
Result<ConvolutionDimensionNumbers> GetConvolutionDimensionNumbers(const Instruction& instr);

// ---- Dot ----------------------------------------------------------------------

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};
// lhs_batch_dims= rhs_batch_dims= lhs_contracting_dims= rhs_contracting_dims=,
// each defaulting to empty.
Result<DotDimensionNumbers> GetDotDimensionNumbers(const Instruction& instr);

enum class Precision : uint8_t { kDefault, kHigh, kHighest, kPackedNibble };
// `operand_precision={default,high}`; empty when absent.
Result<std::vector<Precision>> GetOperandPrecision(const Instruction& instr);

// ---- Gather / scatter -----------------------------------------------------

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};
// offset_dims, collapsed_slice_dims, start_index_map and index_vector_dim are
// required; the batching dims default to empty.
Result<GatherDimensionNumbers> GetGatherDimensionNumbers(const Instruction& instr);
Result<std::vector<int64_t>> GetGatherSliceSizes(const Instruction& instr);  // required

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};
// update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims and
// index_vector_dim are required; the batching dims default to empty.
Result<ScatterDimensionNumbers> GetScatterDimensionNumbers(const Instruction& instr);

// ---- Compare ------------------------------------------------------------------

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType : uint8_t { kFloat, kTotalOrder, kSigned, kUnsigned };

std::string_view ComparisonDirectionName(ComparisonDirection d);  // "EQ"
std::string_view ComparisonTypeName(ComparisonType t);            // "FLOAT"
std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name);
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name);
// XLA's default comparison type for operands of element type t: FLOAT for
// floating point and complex, SIGNED for signed integers, UNSIGNED otherwise.
ComparisonType DefaultComparisonType(PrimitiveType t);

struct Comparison {
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kFloat;
  bool type_explicit = false;  // written as `type=`
};
// `direction=` (required) and `type=` (default from operand 0's element type;
// kFloat if the instruction has no array operand).
Result<Comparison> GetComparison(const Instruction& instr);

// ---- Other enums and small configs ----------------------------------------

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
Result<FusionKind> GetFusionKind(const Instruction& instr);  // `kind=`, required

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
struct FftConfig {
  FftType type = FftType::kFft;
  std::vector<int64_t> length;
};
Result<FftConfig> GetFftConfig(const Instruction& instr);  // fft_type=, fft_length=

struct ReducePrecisionConfig {
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
};
Result<ReducePrecisionConfig> GetReducePrecisionConfig(const Instruction& instr);

enum class RngDistribution : uint8_t { kUniform, kNormal };
Result<RngDistribution> GetRngDistribution(const Instruction& instr);  // distribution=
enum class RngAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
Result<RngAlgorithm> GetRngAlgorithm(const Instruction& instr);  // algorithm=, default kDefault

enum class TriangularSolveTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };
struct TriangularSolveOptions {
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  TriangularSolveTranspose transpose_a = TriangularSolveTranspose::kNoTranspose;
};
Result<TriangularSolveOptions> GetTriangularSolveOptions(const Instruction& instr);

struct SortConfig {
  int64_t dimension = 0;
  bool is_stable = false;
};
Result<SortConfig> GetSortConfig(const Instruction& instr);

struct TopKConfig {
  int64_t k = 0;
  bool largest = true;
};
Result<TopKConfig> GetTopKConfig(const Instruction& instr);

struct BatchNormConfig {
  double epsilon = 0;
  int64_t feature_index = 0;
};
Result<BatchNormConfig> GetBatchNormConfig(const Instruction& instr);

// ---- Collectives ------------------------------------------------------------

// `replica_groups=`: explicit `{{0,1},{2,3}}` or iota `[2,2]<=[4]`,
// `[2,4]<=[4,2]T(1,0)`, expanded to explicit groups. Empty when absent or
// `{}` (one group of all participants).
Result<std::vector<std::vector<int64_t>>> ParseReplicaGroups(std::string_view text);
Result<std::vector<std::vector<int64_t>>> GetReplicaGroups(const Instruction& instr);
// `source_target_pairs={{0,1},{1,2}}`; empty when absent.
Result<std::vector<std::pair<int64_t, int64_t>>> GetSourceTargetPairs(const Instruction& instr);

}  // namespace kiln::hlo
