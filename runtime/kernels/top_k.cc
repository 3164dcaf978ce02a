// topk and the "TopK" custom-call: the k largest (or smallest) elements along
// the last dimension and their indices, ties broken by the lower index (the
// stable sort XLA's topk decomposer emits). Floats are ordered by XLA's
// total order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <span>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// A key per element whose signed order is the element type's total order.
std::vector<int64_t> TotalOrderKeys(const hlo::Literal& lit) {
  const hlo::PrimitiveType t = lit.shape().element_type();
  const int64_t n = lit.element_count();
  std::vector<int64_t> keys(static_cast<size_t>(n));
  switch (ComputeTypeFor(t)) {
    case ComputeType::kF32:
    case ComputeType::kF64:
      for (int64_t i = 0; i < n; ++i) {
        // Widening to double keeps the order, signs of zeros and of NaNs.
        int64_t bits = std::bit_cast<int64_t>(GetElementAs<double>(lit, i));
        keys[i] = bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
      }
      break;
    case ComputeType::kU64:
      for (int64_t i = 0; i < n; ++i) {
        keys[i] = static_cast<int64_t>(GetElementAs<uint64_t>(lit, i) ^ (uint64_t{1} << 63));
      }
      break;
    default:
      for (int64_t i = 0; i < n; ++i) keys[i] = GetElementAs<int64_t>(lit, i);
      break;
  }
  return keys;
}

bool IsOrderedType(hlo::PrimitiveType t) {
  const ComputeType c = ComputeTypeFor(t);
  return c != ComputeType::kC64 && c != ComputeType::kC128;
}

Result<hlo::Literal> TopK(const hlo::Instruction& instr, const hlo::Literal& input, bool largest) {
  const hlo::Shape& shape = instr.shape();
  const hlo::Shape& in_shape = input.shape();
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 2 || in_shape.rank() < 1 ||
      !IsOrderedType(in_shape.element_type())) {
    return KernelError(instr, "expects an ordered array operand and a (values, indices) result");
  }
  const hlo::Shape& values_shape = shape.tuple_shapes(0);
  const hlo::Shape& indices_shape = shape.tuple_shapes(1);
  const int64_t rank = in_shape.rank();
  const int64_t k = values_shape.rank() == rank ? values_shape.dimensions(rank - 1) : -1;
  const int64_t row = in_shape.dimensions(rank - 1);
  const int64_t rows = row == 0 ? 0 : in_shape.ElementCount() / row;
  if (k < 0 || k > row || values_shape.element_type() != in_shape.element_type() ||
      indices_shape.dimensions() != values_shape.dimensions() ||
      values_shape.ElementCount() != rows * k) {
    return KernelError(
        instr, "result " + shape.ToString() + " does not fit top-k of " + in_shape.ToString());
  }
  const std::vector<int64_t> keys = TotalOrderKeys(input);
  hlo::Literal values(values_shape);
  hlo::Literal indices(indices_shape);
  std::vector<int64_t> order(static_cast<size_t>(row));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* key = keys.data() + r * row;
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key[a] > key[b] : key[a] < key[b];
    });
    for (int64_t j = 0; j < k; ++j) {
      CopyElement(input, r * row + order[j], values, r * k + j);
      SetElementFrom<int64_t>(indices, r * k + j, order[j]);
    }
  }
  std::vector<hlo::Literal> parts;
  parts.push_back(std::move(values));
  parts.push_back(std::move(indices));
  return hlo::Literal::Tuple(std::move(parts));
}

}  // namespace

Result<hlo::Literal> EvalTopK(const hlo::Instruction& instr, Operands operands, EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  KILN_ASSIGN_OR_RETURN(bool largest, hlo::GetBoolAttributeOr(instr, "largest", true));
  KILN_RETURN_IF_ERROR(ctx.Charge(operands[0]->element_count()));
  return TopK(instr, *operands[0], largest);
}

Result<hlo::Literal> EvalTopKCustomCall(const hlo::Instruction& instr, Operands operands,
                                        EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  // The comparator must be compare(p0, p1) GT (largest first) or LT.
  const std::span<hlo::Computation* const> called = instr.called_computations();
  const hlo::Instruction* root =
      called.size() == 1 && called[0] != nullptr ? called[0]->root() : nullptr;
  bool recognised = false;
  bool largest = true;
  if (root != nullptr && root->opcode() == hlo::Opcode::kCompare && root->operand_count() == 2 &&
      root->operand(0)->opcode() == hlo::Opcode::kParameter &&
      root->operand(1)->opcode() == hlo::Opcode::kParameter &&
      root->operand(0)->parameter_number() == 0 && root->operand(1)->parameter_number() == 1) {
    auto comparison = hlo::GetComparison(*root);
    if (comparison && (comparison->direction == hlo::ComparisonDirection::kGt ||
                       comparison->direction == hlo::ComparisonDirection::kLt)) {
      recognised = true;
      largest = comparison->direction == hlo::ComparisonDirection::kGt;
    }
  }
  if (!recognised) {
    return KernelError(instr,
                       "unsupported TopK comparator: expected compare(p0, p1) with "
                       "direction GT or LT");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(operands[0]->element_count()));
  return TopK(instr, *operands[0], largest);
}

}  // namespace kiln::runtime
