// Typed loops for the elementwise ops (unary, binary, compare, select,
// clamp, convert, bitcast-convert of equal widths, reduce-precision, and
// the broadcast of a scalar).
//
// ResolveElementwiseKernel picks, once per instruction, the loop for its
// opcode and element types; running it then costs one indirect call per
// chunk of elements, none per element. A kernel reads `n` elements from each
// input pointer (host storage of the operand's element type, see
// element_traits.h) and writes `n` elements to `out`. Inputs and output may
// not overlap unless they are the same pointer.
//
// Resolution fails with an error naming the instruction when the op is not
// defined on its element type ("instruction %x: sqrt is not defined on
// s32"). Kernels are stateless; thread-safe.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::runtime {

// Attribute values a few loops need.
struct ElementwiseParams {
  int exponent_bits = 0;  // reduce-precision
  int mantissa_bits = 0;  // reduce-precision
};

struct ElementwiseArgs {
  const void* in[3] = {nullptr, nullptr, nullptr};
  void* out = nullptr;
  int64_t n = 0;
};

using ElementwiseFn = void (*)(const ElementwiseArgs& args, const ElementwiseParams& params);

struct ElementwiseKernel {
  ElementwiseFn fn = nullptr;
  ElementwiseParams params;
  void Run(const ElementwiseArgs& args) const { fn(args, params); }
};

// True for instructions a kernel below can compute: elementwise opcodes and
// `broadcast` of a one-element operand, with an array result.
bool IsElementwiseInstruction(const hlo::Instruction& instr);

// The kernel computing `instr` (IsElementwiseInstruction must hold).
Result<ElementwiseKernel> ResolveElementwiseKernel(const hlo::Instruction& instr);

namespace elementwise_internal {
// Per-family resolvers (unary_kernels.cc, binary_kernels.cc,
// convert_kernels.cc); each returns nullptr for a combination it lacks.
ElementwiseFn ResolveUnary(hlo::Opcode opcode, hlo::PrimitiveType operand_type,
                           hlo::PrimitiveType result_type);
ElementwiseFn ResolveBinary(hlo::Opcode opcode, hlo::PrimitiveType operand_type);
Result<ElementwiseFn> ResolveCompare(const hlo::Instruction& instr);
ElementwiseFn ResolveConvert(hlo::PrimitiveType from, hlo::PrimitiveType to);
ElementwiseFn ResolveReducePrecision(hlo::PrimitiveType type);
ElementwiseFn ResolveSelect(hlo::PrimitiveType type);
ElementwiseFn ResolveClamp(hlo::PrimitiveType type);
// Copies n elements of `bytes` bytes each.
ElementwiseFn ResolveCopy(int bytes);
}  // namespace elementwise_internal

}  // namespace kiln::runtime
