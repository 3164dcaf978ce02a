// Kernels for the computationally heavy HLO ops, one function each.
//
// Every kernel computes `instr`'s value from the values of its operands
// (operands[i] is the value of instr.operand(i), already evaluated) and
// returns a literal of instr.shape() (a tuple literal for tuple-shaped ops).
// Semantics follow XLA's operation semantics (../shared/hlo-grammar.md);
// bf16/f16 results are computed in f32 and rounded to nearest even once per
// op. Errors (bad attributes, an unsupported variant) name the instruction.
// Kernels keep no state; they are thread-safe given distinct contexts.
#pragma once

#include <span>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "runtime/kernels/eval_context.h"

namespace kiln::runtime {

using Operands = std::span<const hlo::Literal* const>;
using KernelFn = Result<hlo::Literal> (*)(const hlo::Instruction& instr, Operands operands,
                                          EvalContext& ctx);

Result<hlo::Literal> EvalDot(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
Result<hlo::Literal> EvalConvolution(const hlo::Instruction& instr, Operands operands,
                                     EvalContext& ctx);
Result<hlo::Literal> EvalReduce(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
Result<hlo::Literal> EvalReduceWindow(const hlo::Instruction& instr, Operands operands,
                                      EvalContext& ctx);
Result<hlo::Literal> EvalSelectAndScatter(const hlo::Instruction& instr, Operands operands,
                                          EvalContext& ctx);
Result<hlo::Literal> EvalGather(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
Result<hlo::Literal> EvalScatter(const hlo::Instruction& instr, Operands operands,
                                 EvalContext& ctx);
Result<hlo::Literal> EvalSort(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
Result<hlo::Literal> EvalRngBitGenerator(const hlo::Instruction& instr, Operands operands,
                                         EvalContext& ctx);
Result<hlo::Literal> EvalRng(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
// Kernels for further heavy ops.
Result<hlo::Literal> EvalFft(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);
Result<hlo::Literal> EvalCholesky(const hlo::Instruction& instr, Operands operands,
                                  EvalContext& ctx);
Result<hlo::Literal> EvalTriangularSolve(const hlo::Instruction& instr, Operands operands,
                                         EvalContext& ctx);
Result<hlo::Literal> EvalBatchNormTraining(const hlo::Instruction& instr, Operands operands,
                                           EvalContext& ctx);
Result<hlo::Literal> EvalBatchNormInference(const hlo::Instruction& instr, Operands operands,
                                            EvalContext& ctx);
Result<hlo::Literal> EvalBatchNormGrad(const hlo::Instruction& instr, Operands operands,
                                       EvalContext& ctx);
Result<hlo::Literal> EvalTopK(const hlo::Instruction& instr, Operands operands, EvalContext& ctx);

// Custom-call targets with a kernel here ("TopK"); the evaluator dispatches
// them by target name.
Result<hlo::Literal> EvalTopKCustomCall(const hlo::Instruction& instr, Operands operands,
                                        EvalContext& ctx);

// The kernel for an opcode this library implements (the ones above plus any
// other heavy op it adds: triangular-solve, cholesky, fft, top-k, ...);
// nullptr when the opcode is not one of them.
KernelFn FindHeavyKernel(hlo::Opcode opcode);

}  // namespace kiln::runtime
