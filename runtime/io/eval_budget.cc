#include "runtime/io/eval_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>

#include "compiler/hlo/instruction.h"
#include "base/str_cat.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::runtime::io {
namespace {

constexpr int64_t kOverflow = std::numeric_limits<int64_t>::max();

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? kOverflow : sum;
}

// Parameters + result + the largest value of any instruction, with `bytes`
// measuring a shape and `add` summing (saturating integers or doubles).
template <typename Number, typename Bytes, typename Add>
Number SumEvalBytes(const hlo::Module& module, const Bytes& bytes, const Add& add) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return 0;
  Number total = 0;
  for (const hlo::Instruction* parameter : entry->parameters()) {
    if (parameter != nullptr) total = add(total, bytes(parameter->shape()));
  }
  if (entry->root() != nullptr) total = add(total, bytes(entry->root()->shape()));
  Number largest = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      largest = std::max(largest, bytes(instruction->shape()));
    }
  }
  return add(total, largest);
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

double HostBytesReal(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) total += HostBytesReal(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  double bytes = hlo::HostByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    if (d < 0) return std::numeric_limits<double>::infinity();
    bytes *= static_cast<double>(d);
  }
  return bytes;
}

std::string DescribeBytes(double bytes) {
  if (std::isinf(bytes) || std::isnan(bytes)) return "unbounded";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  double scaled = bytes;
  int unit = -1;
  while (scaled >= 1024 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    scaled /= 1024;
    ++unit;
  }
  char figure[64] = "";
  if (unit >= 0) std::snprintf(figure, sizeof(figure), "%.2f %s", scaled, kUnits[unit]);
  char count[64];
  if (bytes < 9007199254740992.0) {  // 2^53: exact as an integer
    std::snprintf(count, sizeof(count), "%lld bytes", static_cast<long long>(bytes));
    return unit < 0 ? std::string(count) : StrCat(count, " (", figure, ")");
  }
  std::snprintf(count, sizeof(count), "%.3g bytes", bytes);
  return StrCat(figure, " (", count, ")");
}

int64_t LargestInternalValueBytes(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  int64_t largest = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (computation.get() == entry &&
          (instruction->opcode() == hlo::Opcode::kParameter || instruction.get() == entry->root())) {
        continue;
      }
      largest = std::max(largest, HostBytes(instruction->shape()));
    }
  }
  return largest;
}

int64_t EstimateEvalBytes(const hlo::Module& module) {
  return SumEvalBytes<int64_t>(module, HostBytes, SaturatingAdd);
}

Status CheckEvalMemory(const hlo::Module& module, int64_t budget_bytes) {
  int64_t needed = EstimateEvalBytes(module);
  if (needed <= budget_bytes) return Ok();
  const double real = needed == kOverflow ? SumEvalBytes<double>(module, HostBytesReal, std::plus<double>())
                                          : static_cast<double>(needed);
  return ResourceExhaustedError(StrCat("too large to evaluate: needs at least ", DescribeBytes(real),
                                       " (parameters, result and the largest intermediate value), over the "
                                       "budget of ",
                                       DescribeBytes(static_cast<double>(budget_bytes))));
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
