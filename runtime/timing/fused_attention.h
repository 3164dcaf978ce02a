// The work of a fused attention custom call, as the flash-attention kernel
// that runs in its place: GEMMs over the score matrix on the MXU and the
// softmax over it on the vector unit, with the score matrix kept in VMEM
// (never written to HBM).
//
// Recognised: TransformerEngine's `te_fused_attn_forward_ffi` and
// `te_fused_attn_backward_ffi` (JAX's dumps of Llama/Mixtral steps), with
// Q, K and V as operands 0..2 in [batch, seq, heads, head_dim] order
// (qkv_layout BSHD; grouped-query K/V heads are shared by the Q heads).
//  - forward: S = Q K^T and O = P V, two GEMMs per head; the softmax takes
//    13 vector operations per score (scale, mask, running max, subtract,
//    exp at 8, sum);
//  - backward: S recomputed, dP = dO V^T, dV = P^T dO, dQ = dS K and
//    dK = dS^T Q, five GEMMs per head; 14 vector operations per score.
// A causal mask (mask_type 2..5) skips the blocks above the diagonal: half
// the scores, half of every GEMM.
//
// Pure functions over an immutable instruction; thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"
#include "runtime/timing/mxu_model.h"

namespace kiln::runtime::timing {

struct FusedAttentionWork {
  std::vector<Contraction> contractions;  // multiplicity 1, `instruction` the custom call
  double scores = 0;                      // score elements computed (causal: the half)
  double vector_ops = 0;                  // softmax work over them
};

// Whether `instr` is a fused attention custom call this file describes.
bool IsFusedAttention(const hlo::Instruction& instr);

// Its work; an error naming the instruction when Q, K or V are not rank-4
// arrays whose batch, sequence and head dimensions line up.
Result<FusedAttentionWork> DescribeFusedAttention(const hlo::Instruction& instr);

}  // namespace kiln::runtime::timing
