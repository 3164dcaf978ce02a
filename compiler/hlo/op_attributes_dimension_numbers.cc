// Decoders for convolution, dot, gather and scatter dimension numbers and
// operand precision (op_attributes.h).
#include "compiler/hlo/op_attributes.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/lexer.h"
#include "compiler/hlo/op_attributes_util.h"

namespace kiln::hlo {

using op_attributes_internal::AttrError;
using op_attributes_internal::Annotate;
using op_attributes_internal::RequiredText;
using op_attributes_internal::LookupEnum;

// ---- Convolution ------------------------------------------------------------

namespace {

// Decodes one part of dim_labels. `a`/`b` are the two letters of the part
// (b,f / i,o); spatial positions are returned by digit.
Status ParseConvPart(std::string_view part, char a, char b, int64_t* pos_a, int64_t* pos_b,
                     std::vector<int64_t>* spatial, const char* what) {
  *pos_a = -1;
  *pos_b = -1;
  std::vector<int64_t> by_digit(10, -1);
  int64_t digits = 0;
  for (size_t i = 0; i < part.size(); ++i) {
    char c = part[i];
    int64_t pos = static_cast<int64_t>(i);
    if (c == '?') continue;
    if (c == a || c == b) {
      int64_t* slot = c == a ? pos_a : pos_b;
      if (*slot != -1) return InvalidArgumentError(std::string(what) + " repeats '" + std::string(1, c) + "'");
      *slot = pos;
    } else if (c >= '0' && c <= '9') {
      if (by_digit[c - '0'] != -1) {
        return InvalidArgumentError(std::string(what) + " repeats spatial dimension " + std::string(1, c));
      }
      by_digit[c - '0'] = pos;
      ++digits;
    } else {
      return InvalidArgumentError(std::string(what) + " has unexpected label '" + std::string(1, c) + "'");
    }
  }
  if (*pos_a == -1 || *pos_b == -1) {
    return InvalidArgumentError(std::string(what) + " must contain '" + std::string(1, a) + "' and '" +
                                std::string(1, b) + "'");
  }
  spatial->clear();
  for (int64_t d = 0; d < digits; ++d) {
    if (by_digit[d] == -1) {
      return InvalidArgumentError(std::string(what) + " is missing spatial dimension " + std::to_string(d));
    }
    spatial->push_back(by_digit[d]);
  }
  return Ok();
}

}  // namespace

Result<ConvolutionDimensionNumbers> ParseConvolutionDimensionNumbers(std::string_view text) {
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore) {
    return InvalidArgumentError("expected lhs_rhs->out, got '" + std::string(text) + "'");
  }
  std::string_view lhs = text.substr(0, underscore);
  std::string_view rhs = text.substr(underscore + 1, arrow - underscore - 1);
  std::string_view out = text.substr(arrow + 2);
  ConvolutionDimensionNumbers d;
  KILN_RETURN_IF_ERROR(ParseConvPart(lhs, 'b', 'f', &d.input_batch_dimension,
                                     &d.input_feature_dimension, &d.input_spatial_dimensions,
                                     "lhs dimension labels"));
  KILN_RETURN_IF_ERROR(ParseConvPart(rhs, 'i', 'o', &d.kernel_input_feature_dimension,
                                     &d.kernel_output_feature_dimension,
                                     &d.kernel_spatial_dimensions, "rhs dimension labels"));
  KILN_RETURN_IF_ERROR(ParseConvPart(out, 'b', 'f', &d.output_batch_dimension,
                                     &d.output_feature_dimension, &d.output_spatial_dimensions,
                                     "output dimension labels"));
  if (d.input_spatial_dimensions.size() != d.kernel_spatial_dimensions.size() ||
      d.input_spatial_dimensions.size() != d.output_spatial_dimensions.size()) {
    return InvalidArgumentError("lhs, rhs and output must have the same number of spatial dimensions in '" +
                                std::string(text) + "'");
  }
  d.input_rank = static_cast<int64_t>(lhs.size());
  d.kernel_rank = static_cast<int64_t>(rhs.size());
  d.output_rank = static_cast<int64_t>(out.size());
  return d;
}

Result<ConvolutionDimensionNumbers> GetConvolutionDimensionNumbers(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "dim_labels"));
  return Annotate(instr, "dim_labels", ParseConvolutionDimensionNumbers(*text));
}

// ---- Dot ----------------------------------------------------------------------

Result<DotDimensionNumbers> GetDotDimensionNumbers(const Instruction& instr) {
  DotDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.lhs_batch_dimensions, GetIntListAttributeOr(instr, "lhs_batch_dims"));
  KILN_ASSIGN_OR_RETURN(d.rhs_batch_dimensions, GetIntListAttributeOr(instr, "rhs_batch_dims"));
  KILN_ASSIGN_OR_RETURN(d.lhs_contracting_dimensions,
                        GetIntListAttributeOr(instr, "lhs_contracting_dims"));
  KILN_ASSIGN_OR_RETURN(d.rhs_contracting_dimensions,
                        GetIntListAttributeOr(instr, "rhs_contracting_dims"));
  return d;
}

Result<std::vector<Precision>> GetOperandPrecision(const Instruction& instr) {
  std::vector<Precision> out;
  if (instr.FindAttribute("operand_precision") == nullptr) return out;
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, "operand_precision"));
  constexpr std::array<std::string_view, 4> kNames = {"default", "high", "highest",
                                                      "packed_nibble"};
  Lexer lex(*text);
  Token t = lex.Next();
  if (t.kind != TokKind::kLbrace) return AttrError(instr, "operand_precision", "expected '{'");
  t = lex.Next();
  while (t.kind != TokKind::kRbrace) {
    std::string lower(t.text);
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    std::optional<Precision> p = LookupEnum<Precision>(kNames, lower);
    if (t.kind != TokKind::kIdent || !p) {
      return AttrError(instr, "operand_precision",
                       "unknown precision '" + std::string(t.text) + "'");
    }
    out.push_back(*p);
    t = lex.Next();
    if (t.kind == TokKind::kComma)
      t = lex.Next();
    else if (t.kind != TokKind::kRbrace)
      return AttrError(instr, "operand_precision", "expected ',' or '}'");
  }
  return out;
}

// ---- Gather / scatter -----------------------------------------------------

Result<GatherDimensionNumbers> GetGatherDimensionNumbers(const Instruction& instr) {
  GatherDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.offset_dims, GetIntListAttribute(instr, "offset_dims"));
  KILN_ASSIGN_OR_RETURN(d.collapsed_slice_dims, GetIntListAttribute(instr, "collapsed_slice_dims"));
  KILN_ASSIGN_OR_RETURN(d.start_index_map, GetIntListAttribute(instr, "start_index_map"));
  KILN_ASSIGN_OR_RETURN(d.index_vector_dim, GetIntAttribute(instr, "index_vector_dim"));
  KILN_ASSIGN_OR_RETURN(d.operand_batching_dims,
                        GetIntListAttributeOr(instr, "operand_batching_dims"));
  KILN_ASSIGN_OR_RETURN(d.start_indices_batching_dims,
                        GetIntListAttributeOr(instr, "start_indices_batching_dims"));
  return d;
}

Result<std::vector<int64_t>> GetGatherSliceSizes(const Instruction& instr) {
  return GetIntListAttribute(instr, "slice_sizes");
}

Result<ScatterDimensionNumbers> GetScatterDimensionNumbers(const Instruction& instr) {
  ScatterDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.update_window_dims, GetIntListAttribute(instr, "update_window_dims"));
  KILN_ASSIGN_OR_RETURN(d.inserted_window_dims, GetIntListAttribute(instr, "inserted_window_dims"));
  KILN_ASSIGN_OR_RETURN(d.scatter_dims_to_operand_dims,
                        GetIntListAttribute(instr, "scatter_dims_to_operand_dims"));
  KILN_ASSIGN_OR_RETURN(d.index_vector_dim, GetIntAttribute(instr, "index_vector_dim"));
  KILN_ASSIGN_OR_RETURN(d.input_batching_dims, GetIntListAttributeOr(instr, "input_batching_dims"));
  KILN_ASSIGN_OR_RETURN(d.scatter_indices_batching_dims,
                        GetIntListAttributeOr(instr, "scatter_indices_batching_dims"));
  return d;
}

}  // namespace kiln::hlo
