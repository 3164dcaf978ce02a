// OpClass: how kiln's compiler sees each opcode when it forms kernels. The
// fusion planner, tiling and cost model use it (compiler/fusion/op_class.h
// re-exports it), and so do the passes that must predict what the planner
// will fuse (compiler/passes/layout_bitcasts.cc): one list for both.
//
// Pure functions over the IR; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

enum class OpClass : uint8_t {
  kFree,          // no kernel: parameter, constant, get-tuple-element, tuple,
                  // bitcast, after-all, add-dependency, opt-barrier, domain
  kElementwise,   // unary/binary/ternary elementwise on arrays
  kBroadcast,     // broadcast, iota: cheap producers of large arrays
  kDataMovement,  // reshape, transpose, slice, concatenate, pad, reverse,
                  // dynamic-slice, bitcast-convert
  kReduce,        // reduce with an array result
  kContraction,   // dot, convolution (MXU work)
  kWindow,        // depthwise convolution, reduce-window: window work on
                  // the vector unit, reading its operands from HBM and
                  // computing elementwise epilogues in its kernel
  kOpaque,        // everything else: its own kernel, never fused
};

OpClass ClassOf(const Instruction& instr);

// A convolution whose every group reads one input feature (depthwise, as
// MobileNet's 3x3 layers): one multiply-add per window tap and output
// element, which would fill one row of a 128x128 MXU weight tile per group.
// It runs on the vector unit, as a window op like reduce-window.
bool IsDepthwiseConvolution(const Instruction& instr);

// The weight gradient of a depthwise convolution as XLA writes it: a
// convolution of the activations with the output gradient whose batch is
// split into one group per output feature (batch_group_count). Each
// output is a sum of products over the batch and the window: vector work
// that streams both operands, not a GEMM (N = 1 per group).
bool IsDepthwiseFilterGradient(const Instruction& instr);

// A depthwise convolution, its weight gradient or a single-operand
// reduce-window with an array result: the ops of OpClass::kWindow.
bool IsWindowOp(const Instruction& instr);

// Elementwise, broadcast and data-movement ops: fusible into loop kernels.
bool IsLoopFusible(const Instruction& instr);

}  // namespace kiln::hlo
