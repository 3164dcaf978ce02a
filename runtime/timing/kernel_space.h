// The iteration space of a kernel and how its arrays follow it: the bridge
// between a kernel's HLO (KernelWork) and the block pipeline (grid_model.h).
//
//  - contraction: the GEMM (batch, m, n, k) of the kernel's main dot or
//    convolution; k is walked sequentially into an accumulator. The dot's
//    operands are seen as [batch, m, k] / [batch, k, n] blocks (oriented as
//    they lie in memory); epilogue inputs and outputs follow (batch, m, n).
//  - reduce: the operand of the widest reduce; reduced dimensions are
//    walked sequentially (innermost), outputs follow the kept dimensions.
//  - loop: the largest output; arrays follow the dimensions they share with
//    it, aligned from the minor end; others are brought in whole.
//  - untiled: kernels with control flow or opaque ops; no grid.
// Blocks tile the two minor dimensions of loop/reduce spaces and m, n, k of
// contractions; every other dimension has block 1.
//
// Plain values; the pointers borrow from the KernelWork and the module.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/op_kinds.h"
#include "runtime/timing/kernel_work.h"

namespace kiln::runtime::timing {

using runtime::SpaceKind;  // runtime/chip/op_kinds.h

// An array as the pipeline moves it: `dims` major to minor, each following
// space dimension `space_dim[a]` or taken whole (-1).
struct SpaceArray {
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  std::vector<int64_t> dims;
  std::vector<int> space_dim;
  bool output = false;
};

struct IterationSpace {
  SpaceKind kind = SpaceKind::kUntiled;
  std::vector<int64_t> extents;   // per space dimension
  std::vector<bool> sequential;   // reduction dimensions (walked last)
  std::vector<bool> blockable;    // dimensions whose block may exceed 1
  int64_t sublanes = 8;           // largest sublane tile among the arrays
  std::vector<SpaceArray> arrays; // the kernel's inputs, then its outputs
  const Contraction* contraction = nullptr;  // kContraction: the main one
  // Contraction space dimension numbers.
  static constexpr int kBatch = 0, kM = 1, kN = 2, kK = 3;
};

// `inputs[i]` is entry parameter i's shape, `outputs` the root's arrays.
IterationSpace MakeIterationSpace(const hlo::Module& module, const KernelWork& work,
                                  std::span<const hlo::Shape* const> inputs,
                                  std::span<const hlo::Shape* const> outputs);

}  // namespace kiln::runtime::timing
