// How the fusion planner, tiling and cost model see each opcode.
//
// Pure functions over the IR; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/op_class.h"

namespace kiln::fusion {

// The opcode classes (OpClass, ClassOf, IsLoopFusible) live in kiln_hlo, so
// the passes that predict the planner's fusions share their one list.
using hlo::ClassOf;
using hlo::IsLoopFusible;
using hlo::OpClass;

// True when the instruction never forms (or joins) a kernel.
inline bool IsFreeInstruction(const hlo::Instruction& instr) {
  return ClassOf(instr) == OpClass::kFree;
}

// The ids a value comes from, looking through free instructions: `id_of`
// maps entry indices to an id (a kernel, a buffer) or -1; the walk stops at
// every instruction that has one and passes through free ones
// (get-tuple-element of a tuple follows the one element; control
// predecessors too when `follow_control`). Ids are appended to `out`.
void CollectSourceIds(const hlo::Instruction* value, const std::vector<int64_t>& id_of,
                      bool follow_control, std::vector<int64_t>& out);

// Work that should not be recomputed: contractions, reductions, window ops,
// opaque ops and the transcendental or division elementwise ops.
bool IsExpensive(const hlo::Instruction& instr);

// True for producers a dot or convolution may compute inside its kernel as
// it loads its operand blocks into VMEM (a prologue): elementwise,
// broadcast and data-movement ops, as XLA fuses weight converts, scaling,
// transposes and slices of stacked layers into the contraction's fusion.
// Reductions, contractions and opaque ops never feed one in-kernel.
bool FeedsContractionBlocks(const hlo::Instruction& producer);

// True for a copy or transpose whose result does not hold its operand's
// bytes in place (passes::IsPhysicalNoOp): a move that transposes memory.
bool ChangesMemoryOrder(const hlo::Instruction& instr);

// True when two arrays have the same dimensions, whatever their element
// types: a loop over one visits the other element for element.
bool SameExtents(const hlo::Shape& a, const hlo::Shape& b);

// True for a convert whose operand has no more bytes than its result
// (bf16 -> f32): recomputed in each reader, it costs no HBM traffic that
// reading its result would not.
bool IsWideningConvert(const hlo::Instruction& instr);

// True when `consumer` can be computed in the kernel of `reduce` as its
// epilogue: an elementwise op over the reduction's result, element for
// element (same dimensions; element types may differ), as XLA fuses
// `mean = sum / n` or a convert of the result into the reduction's fusion.
bool IsReductionEpilogue(const hlo::Instruction& reduce, const hlo::Instruction& consumer);

// True when `consumer` can be computed in the kernel of window op `window`
// (a depthwise convolution or reduce-window, OpClass::kWindow) as its
// epilogue: an elementwise op over the window's result, element for
// element, as XLA fuses a depthwise convolution's batch-norm scale, bias
// and activation into its fusion. A window op's own operands are read from
// HBM: each element feeds several taps.
bool IsWindowEpilogue(const hlo::Instruction& window, const hlo::Instruction& consumer);

// True when two reductions walk the same space: operands of the same
// dimensions, reduced along the same dimensions. Such reductions can share a
// kernel (sibling statistics, a mean and a mean of squares).
bool SameReductionSpace(const hlo::Instruction& a, const hlo::Instruction& b);

// How many times a consumer reads each element of `operand_index`, when
// more than once (an expanding broadcast); 1 otherwise.
int64_t OperandReuse(const hlo::Instruction& consumer, int64_t operand_index);

// A dot or convolution seen as a batched GEMM: batch x (M x K) . (K x N).
// A convolution is its implicit GEMM (M = output elements / N, N = output
// features, K = kernel elements / N). All 1 for other opcodes or malformed
// attributes.
struct GemmDims {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};
GemmDims GemmOf(const hlo::Instruction& op);

// "%name (opcode)", for reasons and errors.
std::string Describe(const hlo::Instruction& instr);

// Bytes of an array or of all leaves of a tuple; 0 for tokens; saturates
// instead of overflowing. An unbounded dynamic dimension (`?`) counts as 1:
// its size is only known at run time.
int64_t ShapeBytes(const hlo::Shape& shape);

}  // namespace kiln::fusion
