#include "runtime/io/eval_budget.h"

#include <algorithm>
#include <limits>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/op_attributes.h"
#include "runtime/io/str_cat.h"

namespace kiln::runtime::io {
namespace {

constexpr int64_t kOverflow = std::numeric_limits<int64_t>::max();

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? kOverflow : sum;
}

std::string GiB(int64_t bytes) {
  if (bytes == kOverflow) return "more than 2^63 bytes";
  return StrCat(bytes, " bytes (",
                static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 30), " GiB)");
}

}  // namespace

int64_t HostBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      total = SaturatingAdd(total, HostBytes(element));
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes = shape.ByteSize();
  return bytes < 0 ? kOverflow : bytes;
}

int64_t EstimateEvalBytes(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return 0;
  int64_t total = 0;
  for (const hlo::Instruction* parameter : entry->parameters()) {
    if (parameter != nullptr) total = SaturatingAdd(total, HostBytes(parameter->shape()));
  }
  if (entry->root() != nullptr) total = SaturatingAdd(total, HostBytes(entry->root()->shape()));
  int64_t largest = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      largest = std::max(largest, HostBytes(instruction->shape()));
    }
  }
  return SaturatingAdd(total, largest);
}

Status CheckEvalMemory(const hlo::Module& module, int64_t budget_bytes) {
  int64_t needed = EstimateEvalBytes(module);
  if (needed <= budget_bytes) return Ok();
  return MakeError(StrCat("too large to evaluate: needs at least ", GiB(needed),
                          " (parameters, result and the largest intermediate value), over the "
                          "budget of ",
                          GiB(budget_bytes)));
}

int64_t EstimateMultiplyAdds(const hlo::Module& module) {
  int64_t total = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (!instr->shape().IsArray() || instr->operand_count() < 2) continue;
      const int64_t out = instr->shape().ElementCount();
      const hlo::Shape& rhs = instr->operand(1)->shape();
      int64_t per_element = 0;
      if (instr->opcode() == hlo::Opcode::kDot) {
        auto dims = hlo::GetDotDimensionNumbers(*instr);
        if (!dims) continue;
        per_element = 1;
        for (int64_t d : dims->rhs_contracting_dimensions) {
          if (d >= 0 && d < rhs.rank() &&
              __builtin_mul_overflow(per_element, rhs.dimensions(d), &per_element)) {
            return kOverflow;
          }
        }
      } else if (instr->opcode() == hlo::Opcode::kConvolution) {
        auto dims = hlo::GetConvolutionDimensionNumbers(*instr);
        if (!dims || dims->kernel_output_feature_dimension < 0 ||
            dims->kernel_output_feature_dimension >= rhs.rank()) {
          continue;
        }
        const int64_t features =
            std::max<int64_t>(rhs.dimensions(dims->kernel_output_feature_dimension), 1);
        per_element = rhs.ElementCount() / features;
      } else {
        continue;
      }
      int64_t product;
      if (out < 0 || per_element < 0 || __builtin_mul_overflow(out, per_element, &product)) {
        return kOverflow;  // a count that overflowed is negative
      }
      total = SaturatingAdd(total, product);
    }
  }
  return total;
}

}  // namespace kiln::runtime::io
