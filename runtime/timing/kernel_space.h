// The iteration space of a kernel and how its arrays follow it: the bridge
// between a kernel's HLO (KernelWork) and the block pipeline (grid_model.h).
//
// The space and the mapping of every array onto it come from the mapping
// the compiler's tiling shares (runtime/chip/kernel_indexing.h):
//  - contraction: the GEMM (batch, m, n, k) of the kernel's main dot or
//    convolution; k is walked sequentially into an accumulator. Arrays
//    follow the dimensions the dot ties them to, whatever their order or
//    shape; a convolution's operands are read as GEMM panels ([batch, m,
//    features] and [k, n] as they lie in memory: its input window is built
//    in VMEM once per m block).
//  - reduce: the operand of the widest reduce; reduced dimensions are
//    walked sequentially (innermost), outputs follow the kept dimensions.
//  - loop: the largest output; arrays follow the dimensions they reach it
//    through (transposes, broadcasts, reshapes, slices, ...).
//  - untiled: kernels with control flow or opaque ops; no grid.
// An array dimension the mapping cannot place is taken whole by every
// block. Blocks tile the blockable dimensions (kernel_indexing.h) and
// stack the others (space_blocks.h). Arrays are seen as laid out in memory (their
// layout's order), so tile padding falls on their true minor dimensions.
//
// Plain values; the pointers borrow from the KernelWork and the module.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/kernel_indexing.h"
#include "runtime/chip/op_kinds.h"
#include "runtime/timing/kernel_work.h"

namespace kiln::runtime::timing {

using runtime::SpaceKind;  // runtime/chip/op_kinds.h

// An array as the pipeline moves it: `dims` major to minor as laid out,
// each following the space parts of `index[a]` (unknown: taken whole).
struct SpaceArray {
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  std::vector<int64_t> dims;
  std::vector<DimIndex> index;
  bool output = false;
};

struct IterationSpace {
  SpaceKind kind = SpaceKind::kUntiled;
  std::vector<int64_t> extents;   // per space dimension
  std::vector<bool> sequential;   // reduction dimensions (walked last)
  std::vector<bool> blockable;    // dimensions whose block may exceed 1
  std::vector<int64_t> align;     // what their blocks are multiples of
  std::vector<bool> stacked;      // dimensions whose blocks stack whole tiles
  int64_t sublanes = 8;           // largest sublane tile among the arrays
  std::vector<SpaceArray> arrays; // the kernel's inputs, then its outputs
  const Contraction* contraction = nullptr;  // kContraction: the main one
  // Contraction space dimension numbers.
  static constexpr int kBatch = KernelIndexing::kBatch, kM = KernelIndexing::kM, kN = KernelIndexing::kN,
                       kK = KernelIndexing::kK;
};

// The space of the kernel `module` (its entry's parameters are the inputs,
// its root or root tuple's elements the outputs; `inputs[i]` is parameter
// i's shape, `outputs` the root's arrays).
IterationSpace MakeIterationSpace(const hlo::Module& module, const KernelWork& work,
                                  std::span<const hlo::Shape* const> inputs,
                                  std::span<const hlo::Shape* const> outputs);

// The space of contraction `c` run as a kernel of its own, its operands
// read as GEMM panels and its [batch, m, n] result written once: how a dot
// or convolution inside a loop body is tiled (XLA runs each body op as a
// kernel). The result's `contraction` points at `c`, which must outlive it.
IterationSpace LoneContractionSpace(const Contraction& c);

}  // namespace kiln::runtime::timing
