// The MXU (matrix unit) part of the timing model: what a dot or a
// convolution costs on a chip's systolic arrays.
//
// A contraction is seen as a (batched) GEMM: out[b, m, n] = sum_k lhs[b, m,
// k] * rhs[b, k, n]; a convolution is its implicit GEMM (m = batch x output
// spatial, n = output features per group, k = input features per group x
// kernel window; groups are batches). The MXU holds one mxu x mxu tile of
// the rhs and streams lhs rows through it, so M is padded to the operand's
// sublane tile and K and N to the MXU size; the chip's MXUs work on
// different rhs tiles in parallel. Rates come from the chip's peak FLOP/s
// (one MXU cycle = 2 * mxu^2 * mxus / peak), never from a clock. f32
// operands at DEFAULT precision take one bf16 pass, HIGH three, HIGHEST six;
// 8-bit integer operands run at the int8 rate.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::runtime::timing {

struct GemmShape {
  double batch = 1;
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  double Flops() const { return 2.0 * batch * static_cast<double>(m) * n * k; }
};

struct Contraction {
  const hlo::Instruction* instruction = nullptr;  // the dot or convolution
  GemmShape gemm;
  hlo::PrimitiveType lhs_type = hlo::PrimitiveType::kF32;
  hlo::PrimitiveType rhs_type = hlo::PrimitiveType::kF32;
  hlo::PrimitiveType out_type = hlo::PrimitiveType::kF32;
  int passes = 1;         // bf16 MXU passes per product
  // Memory orientation of the operands (default layouts): K is the lhs's
  // minor dimension ([m, k], not [k, m]); N is the rhs's ([k, n]).
  bool lhs_k_minor = true;
  bool rhs_n_minor = true;
  // Times the instruction runs per kernel invocation (loops).
  double multiplicity = 1;
  // Its result stays in VMEM for the next GEMM of the same kernel (a fused
  // attention's scores): priced at the MXU, never tiled as a kernel of its
  // own.
  bool result_in_vmem = false;
};

// Decodes a dot or convolution (any other opcode is an error). Errors name
// the instruction and the attribute at fault.
Result<Contraction> DescribeContraction(const hlo::Instruction& instr);

// Seconds the chip's MXUs spend on one `block` of contraction `c` (padding
// included; the full problem when block == c.gemm).
double MxuSeconds(const Contraction& c, const GemmShape& block, const ChipSpec& chip);

// Peak MXU rate for `c` in FLOP/s (its operand types' MxuPeakRate).
double MxuPeakFlops(const Contraction& c, const ChipSpec& chip);

}  // namespace kiln::runtime::timing
