// Small helpers shared by the kernels: error messages that name the
// instruction, operand checks and transposition of row-major buffers.
//
// Header-only pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "runtime/kernels/index_util.h"

namespace kiln::runtime {

// "instruction %dot.3 (dot): <message>": the instruction cannot run as
// written (invalid_argument).
inline Error KernelError(const hlo::Instruction& instr, std::string_view message) {
  return InvalidArgumentError("instruction %" + std::string(instr.name()) + " (" + instr.OpcodeText() +
                              "): " + std::string(message));
}

// `inner`, with the instruction it happened in as context; keeps its code.
inline Error KernelError(const hlo::Instruction& instr, Error inner) {
  return std::move(inner).WithContext("instruction %" + std::string(instr.name()) + " (" +
                                      instr.OpcodeText() + ")");
}

// Checks there are `count` operands and each is a non-elided array literal
// with data for every element.
inline Status CheckArrayOperands(const hlo::Instruction& instr,
                                 std::span<const hlo::Literal* const> operands, int64_t count) {
  if (static_cast<int64_t>(operands.size()) != count) {
    return KernelError(instr, "expected " + std::to_string(count) + " operands, got " +
                                  std::to_string(operands.size()));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const hlo::Literal* op = operands[i];
    if (op == nullptr || !op->shape().IsArray() || op->elided() ||
        static_cast<int64_t>(op->data().size()) !=
            op->element_count() * hlo::HostByteWidth(op->shape().element_type())) {
      return KernelError(instr, "operand " + std::to_string(i) + " is not an array value");
    }
  }
  return Ok();
}

// "{1,2}" for messages.
inline std::string DimsToString(std::span<const int64_t> dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "}";
}

// Returns `in` (row-major over `dims`) transposed so that output dimension i
// is input dimension perm[i].
template <typename T>
std::vector<T> TransposeRowMajor(std::span<const T> in, std::span<const int64_t> dims,
                                 std::span<const int64_t> perm) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> in_strides = RowMajorStrides(dims);
  std::vector<int64_t> out_dims(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  std::vector<T> out(in.size());
  if (out.empty()) return out;
  if (rank == 0) {
    out[0] = in[0];
    return out;
  }
  // Walk the output in order; the innermost output dimension is a strided
  // run of the input.
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> outer_dims(out_dims.begin(), out_dims.end() - 1);
  std::vector<int64_t> index(rank - 1, 0);
  int64_t o = 0;
  do {
    const T* src = in.data() + LinearIndex(std::span(strides).first(rank - 1), index);
    for (int64_t j = 0; j < inner; ++j) out[o++] = src[j * inner_stride];
  } while (NextIndex(outer_dims, index));
  return out;
}

}  // namespace kiln::runtime
