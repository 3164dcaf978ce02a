// StableHLO's dynamic-shape ops as the front end writes them in HLO, the
// contract between the converter (convert_dynamic.cc) and shape refinement
// (shape_refinement.h): a custom call whose target names the op, whose
// operands are the op's own (the shape operands, integer tensors, after the
// data), and whose backend_config holds the HLO attributes of the static op
// it becomes as `name=value` pairs separated by ';' ("dimensions={0,2}").
// Refinement replaces each by its static op once the shape operands are
// known. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::stablehlo {

// (operand, output_dimensions); `dimensions` of the broadcast.
inline constexpr std::string_view kDynamicBroadcastInDimTarget = "stablehlo.dynamic_broadcast_in_dim";
// (operand, output_shape).
inline constexpr std::string_view kDynamicReshapeTarget = "stablehlo.dynamic_reshape";
// (output_shape); `iota_dimension`.
inline constexpr std::string_view kDynamicIotaTarget = "stablehlo.dynamic_iota";
// (operand, start_indices, limit_indices, strides).
inline constexpr std::string_view kRealDynamicSliceTarget = "stablehlo.real_dynamic_slice";
// (operand, padding_value, edge_padding_low, edge_padding_high, interior_padding).
inline constexpr std::string_view kDynamicPadTarget = "stablehlo.dynamic_pad";
// (operand, start_indices, slice_sizes); the gather's attributes but slice_sizes.
inline constexpr std::string_view kDynamicGatherTarget = "stablehlo.dynamic_gather";
// (lhs, rhs, padding); `window_sizes`, `window_strides`, `lhs_dilation`,
// `rhs_dilation`, `window_reversal` (int lists), `dim_labels`, and the group
// counts when not 1, and `operand_precision`.
inline constexpr std::string_view kDynamicConvTarget = "stablehlo.dynamic_conv";

bool IsDynamicShapeTarget(std::string_view target);

using ConfigPairs = std::vector<std::pair<std::string, std::string>>;
// "a={1,2};b=3" from {{"a", "{1,2}"}, {"b", "3"}} and back; a piece without
// '=' is dropped when reading.
std::string ConfigPairsText(const ConfigPairs& pairs);
ConfigPairs ParseConfigPairs(std::string_view text);

}  // namespace kiln::stablehlo
