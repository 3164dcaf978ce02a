#include "compiler/spmd/op_dims.h"

#include <algorithm>

#include "compiler/hlo/op_attributes.h"

namespace kiln::spmd {
namespace {

std::vector<int64_t> OperandFromResult(const std::vector<int64_t>& result_operand, int64_t rank) {
  std::vector<int64_t> out(rank, -1);
  for (size_t j = 0; j < result_operand.size(); ++j) {
    if (result_operand[j] >= 0) out[result_operand[j]] = static_cast<int64_t>(j);
  }
  return out;
}

// For ops that keep some dimensions of operand 0 whole: dimension j keeps
// its tiles when keeps(j).
template <typename Keeps>
std::vector<int64_t> KeptDims(int64_t rank, Keeps keeps) {
  std::vector<int64_t> from(rank, -1);
  for (int64_t j = 0; j < rank; ++j) {
    if (keeps(j)) from[j] = j;
  }
  return from;
}

}  // namespace

std::vector<int64_t> DotDims::LhsFromResult() const { return OperandFromResult(result_lhs, lhs_rank); }
std::vector<int64_t> DotDims::RhsFromResult() const { return OperandFromResult(result_rhs, rhs_rank); }

Result<DotDims> DotDimsOf(const hlo::Instruction& dot) {
  KILN_ASSIGN_OR_RETURN(hlo::DotDimensionNumbers numbers, hlo::GetDotDimensionNumbers(dot));
  DotDims dims;
  dims.lhs_rank = dot.operand(0)->shape().rank();
  dims.rhs_rank = dot.operand(1)->shape().rank();
  dims.lhs_contracting = numbers.lhs_contracting_dimensions;
  dims.rhs_contracting = numbers.rhs_contracting_dimensions;
  auto in = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  if (numbers.lhs_batch_dimensions.size() != numbers.rhs_batch_dimensions.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return InvalidArgumentError("dot " + std::string(dot.name()) +
                                ": unpaired batch or contracting dimensions");
  }
  for (size_t i = 0; i < numbers.lhs_batch_dimensions.size(); ++i) {
    dims.result_lhs.push_back(numbers.lhs_batch_dimensions[i]);
    dims.result_rhs.push_back(numbers.rhs_batch_dimensions[i]);
  }
  for (int64_t i = 0; i < dims.lhs_rank; ++i) {
    if (in(numbers.lhs_batch_dimensions, i) || in(dims.lhs_contracting, i)) continue;
    dims.result_lhs.push_back(i);
    dims.result_rhs.push_back(-1);
  }
  for (int64_t i = 0; i < dims.rhs_rank; ++i) {
    if (in(numbers.rhs_batch_dimensions, i) || in(dims.rhs_contracting, i)) continue;
    dims.result_lhs.push_back(-1);
    dims.result_rhs.push_back(i);
  }
  if (static_cast<int64_t>(dims.result_lhs.size()) != dot.shape().rank()) {
    return InvalidArgumentError("dot " + std::string(dot.name()) +
                                ": dimension numbers do not give its result rank");
  }
  return dims;
}

std::optional<std::vector<int64_t>> WholeDims(const hlo::Instruction& instr) {
  const hlo::Shape& in = instr.operand(0)->shape();
  int64_t rank = in.rank();
  switch (instr.opcode()) {
    case hlo::Opcode::kSlice: {
      auto spec = hlo::GetSliceSpec(instr);
      if (!spec) return std::nullopt;
      return KeptDims(rank, [&](int64_t j) {
        return spec->starts[j] == 0 && spec->limits[j] == in.dimensions(j) && spec->strides[j] == 1;
      });
    }
    case hlo::Opcode::kPad: {
      auto padding = hlo::GetPaddingConfig(instr);
      if (!padding) return std::nullopt;
      return KeptDims(rank, [&](int64_t j) { return padding->dimensions[j] == hlo::PaddingDimension{}; });
    }
    case hlo::Opcode::kDynamicSlice: {
      auto sizes = hlo::GetDynamicSliceSizes(instr);
      if (!sizes) return std::nullopt;
      return KeptDims(rank, [&](int64_t j) { return (*sizes)[j] == in.dimensions(j); });
    }
    case hlo::Opcode::kConcatenate: {
      auto dim = hlo::GetSingleDimension(instr);
      if (!dim) return std::nullopt;
      return KeptDims(rank, [&](int64_t j) { return j != *dim; });
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<int64_t>> GatherBatchSource(const hlo::Instruction& gather) {
  if (gather.opcode() != hlo::Opcode::kGather || gather.operand_count() != 2) return std::nullopt;
  auto dims = hlo::GetGatherDimensionNumbers(gather);
  if (!dims || !dims->operand_batching_dims.empty() || !dims->start_indices_batching_dims.empty()) {
    return std::nullopt;
  }
  const int64_t rank = gather.shape().rank();
  const int64_t indices_rank = gather.operand(1)->shape().rank();
  std::vector<int64_t> from(rank, -1);
  std::vector<bool> offset(rank, false);
  for (int64_t d : dims->offset_dims) {
    if (d < 0 || d >= rank) return std::nullopt;
    offset[d] = true;
  }
  int64_t next = 0;  // batch dimensions of the indices, in order
  for (int64_t j = 0; j < rank; ++j) {
    if (offset[j]) continue;
    if (next == dims->index_vector_dim) ++next;
    if (next >= indices_rank) return std::nullopt;
    from[j] = next++;
  }
  return from;
}

}  // namespace kiln::spmd
