// sort: sorts N operands together along one dimension with a comparator
// computation. Always a stable merge sort (is_stable or not), which stays
// memory-safe even when the comparator is not a strict weak order. A
// comparator that is one `compare` of parameters 0 and 1 is applied
// directly; any other goes through EvalContext::Call.

#include <algorithm>
#include <bit>
#include <numeric>
#include <optional>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// A comparator `compare(p0, p1)` (or p1, p0) with direction LT or GT.
struct SimpleComparator {
  hlo::Comparison comparison;
  bool swapped = false;  // compare(p1, p0)
};

std::optional<SimpleComparator> ClassifyComparator(const hlo::Computation& c) {
  const hlo::Instruction* root = c.root();
  if (root == nullptr || root->opcode() != hlo::Opcode::kCompare || root->operand_count() != 2) {
    return std::nullopt;
  }
  const hlo::Instruction* a = root->operand(0);
  const hlo::Instruction* b = root->operand(1);
  if (a->opcode() != hlo::Opcode::kParameter || b->opcode() != hlo::Opcode::kParameter) {
    return std::nullopt;
  }
  const bool straight = a->parameter_number() == 0 && b->parameter_number() == 1;
  const bool swapped = a->parameter_number() == 1 && b->parameter_number() == 0;
  auto cmp = hlo::GetComparison(*root);
  if ((!straight && !swapped) || !cmp ||
      (cmp->direction != hlo::ComparisonDirection::kLt &&
       cmp->direction != hlo::ComparisonDirection::kGt)) {
    return std::nullopt;
  }
  return SimpleComparator{*cmp, swapped};
}

// Maps a double to an integer whose order is IEEE totalOrder.
int64_t TotalOrderKey(double v) {
  const int64_t bits = std::bit_cast<int64_t>(v);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

// Sorts `perm` (positions within one slice) with the simple comparator on
// keys of type K.
template <typename K>
void SortByKeys(std::vector<int64_t>& perm, const std::vector<K>& keys, bool greater) {
  if (greater) {
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t i, int64_t j) { return keys[i] > keys[j]; });
  } else {
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t i, int64_t j) { return keys[i] < keys[j]; });
  }
}

class SliceSorter {
 public:
  SliceSorter(Operands operands, const hlo::Computation& comparator, EvalContext& ctx)
      : operands_(operands), comparator_(comparator), ctx_(ctx),
        simple_(ClassifyComparator(comparator)) {
    for (const hlo::Literal* op : operands) {
      scratch_.push_back(ScalarLiteral(op->shape().element_type()));
      scratch_.push_back(ScalarLiteral(op->shape().element_type()));
    }
    for (const hlo::Literal& s : scratch_) scratch_ptrs_.push_back(&s);
  }

  // Sorts positions base + t * stride for t in [0, length) into `perm`.
  Status Sort(int64_t base, int64_t stride, int64_t length, std::vector<int64_t>& perm) {
    perm.resize(length);
    std::iota(perm.begin(), perm.end(), 0);
    if (simple_) {
      SortSimple(base, stride, perm);
      return Ok();
    }
    std::optional<Error> error;
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t i, int64_t j) {
      if (error) return false;
      for (size_t k = 0; k < operands_.size(); ++k) {
        CopyElement(*operands_[k], base + i * stride, scratch_[2 * k], 0);
        CopyElement(*operands_[k], base + j * stride, scratch_[2 * k + 1], 0);
      }
      Result<hlo::Literal> r = ctx_.Call(comparator_, scratch_ptrs_);
      if (!r || !r->shape().IsArray() || r->element_count() != 1) {
        error = r ? InvalidArgumentError("comparator %" + comparator_.name() + " did not return a scalar")
                  : r.error();
        return false;
      }
      return GetElementAs<bool>(*r, 0);
    });
    if (error) return std::unexpected(*error);
    return Ok();
  }

 private:
  void SortSimple(int64_t base, int64_t stride, std::vector<int64_t>& perm) {
    const hlo::Literal& keys_lit = *operands_[0];
    const int64_t n = static_cast<int64_t>(perm.size());
    const bool greater =
        (simple_->comparison.direction == hlo::ComparisonDirection::kGt) != simple_->swapped;
    switch (simple_->comparison.type) {
      case hlo::ComparisonType::kFloat: {
        std::vector<double> keys(n);
        for (int64_t t = 0; t < n; ++t) keys[t] = GetElementAs<double>(keys_lit, base + t * stride);
        return SortByKeys(perm, keys, greater);
      }
      case hlo::ComparisonType::kTotalOrder: {
        std::vector<int64_t> keys(n);
        const bool is_float = hlo::IsFloatingPoint(keys_lit.shape().element_type());
        for (int64_t t = 0; t < n; ++t) {
          keys[t] = is_float ? TotalOrderKey(GetElementAs<double>(keys_lit, base + t * stride))
                             : GetElementAs<int64_t>(keys_lit, base + t * stride);
        }
        return SortByKeys(perm, keys, greater);
      }
      case hlo::ComparisonType::kSigned: {
        std::vector<int64_t> keys(n);
        for (int64_t t = 0; t < n; ++t) keys[t] = GetElementAs<int64_t>(keys_lit, base + t * stride);
        return SortByKeys(perm, keys, greater);
      }
      case hlo::ComparisonType::kUnsigned: {
        std::vector<uint64_t> keys(n);
        for (int64_t t = 0; t < n; ++t) {
          keys[t] = GetElementAs<uint64_t>(keys_lit, base + t * stride);
        }
        return SortByKeys(perm, keys, greater);
      }
    }
  }

  Operands operands_;
  const hlo::Computation& comparator_;
  EvalContext& ctx_;
  std::optional<SimpleComparator> simple_;
  std::vector<hlo::Literal> scratch_;
  std::vector<const hlo::Literal*> scratch_ptrs_;
};

}  // namespace

Result<hlo::Literal> EvalSort(const hlo::Instruction& instr, Operands operands, EvalContext& ctx) {
  if (operands.empty()) return KernelError(instr, "expects at least one operand");
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operands.size()));
  KILN_ASSIGN_OR_RETURN(hlo::SortConfig config, hlo::GetSortConfig(instr));
  const hlo::Shape& shape = operands[0]->shape();
  for (const hlo::Literal* op : operands) {
    if (op->shape().dimensions() != shape.dimensions()) {
      return KernelError(instr, "operands have different dimensions");
    }
  }
  const int64_t dim = config.dimension;
  if (dim < 0 || dim >= shape.rank()) {
    return KernelError(instr, "dimensions={" + std::to_string(dim) +
                                  "} out of range for rank " + std::to_string(shape.rank()));
  }
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* comparator,
                        hlo::GetCalledComputation(instr, "to_apply"));
  if (comparator->parameter_count() != 2 * static_cast<int64_t>(operands.size())) {
    return KernelError(instr, "comparator %" + comparator->name() + " takes " +
                                  std::to_string(comparator->parameter_count()) +
                                  " parameters, expected " +
                                  std::to_string(2 * operands.size()));
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(shape.ElementCount() * static_cast<int64_t>(operands.size())));

  std::vector<hlo::Literal> results;
  for (const hlo::Literal* op : operands) results.push_back(*op);
  const int64_t length = shape.dimensions(dim);
  const int64_t inner = Product(std::span(shape.dimensions()).subspan(dim + 1));
  const int64_t outer = Product(std::span(shape.dimensions()).first(dim));
  SliceSorter sorter(operands, *comparator, ctx);
  std::vector<int64_t> perm;
  for (int64_t o = 0; o < outer && length > 0; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * length * inner + in;
      if (Status s = sorter.Sort(base, inner, length, perm); !s) {
        return KernelError(instr, s.error());
      }
      for (size_t k = 0; k < operands.size(); ++k) {
        for (int64_t t = 0; t < length; ++t) {
          CopyElement(*operands[k], base + perm[t] * inner, results[k], base + t * inner);
        }
      }
    }
  }
  if (results.size() == 1) return std::move(results[0]);
  return hlo::Literal::Tuple(std::move(results));
}

}  // namespace kiln::runtime
