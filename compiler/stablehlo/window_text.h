// Windows of reduce_window, select_and_scatter and convolution: read from
// their StableHLO attributes, written as HLO's `window={size=3x3 stride=2x2
// pad=0_1x0_1 lhs_dilate=... rhs_dilate=... rhs_reversal=...}` (fields at
// their defaults left out, as XLA prints them). Internal to kiln_stablehlo.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/stablehlo/converter.h"

namespace kiln::stablehlo::convert_internal {

struct WindowSpec {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::vector<int64_t> pad_low;
  std::vector<int64_t> pad_high;
  std::vector<int64_t> lhs_dilation;
  std::vector<int64_t> rhs_dilation;
  std::vector<int64_t> reversal;  // 0/1
};

// Reads the attributes named (an empty name: not read, defaults) and fills
// the defaults; fails when their lengths disagree. `sizes` may be empty for
// convolutions, whose window size comes from the kernel.
Result<WindowSpec> ReadWindow(const Converter& c, const Operation& op, std::string_view sizes,
                              std::string_view strides, std::string_view lhs_dilation,
                              std::string_view rhs_dilation, std::string_view padding, std::string_view reversal);
// Fills missing strides, padding, dilations and reversal for `sizes`.
void FillWindowDefaults(WindowSpec& w);
std::string WindowText(const WindowSpec& w);

// A convolution's HLO attributes but its shape (convert_linalg.cc): the
// window (sizes from the kernel), dim_labels, group counts and
// operand_precision (empty when all default).
struct ConvolutionAttributes {
  WindowSpec window;
  std::string dim_labels;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::string precision;
};
Result<ConvolutionAttributes> ReadConvolutionAttributes(const Converter& c, const Operation& op);
void ApplyConvolutionAttributes(hlo::Instruction* conv, const ConvolutionAttributes& a);

}  // namespace kiln::stablehlo::convert_internal
