// The prologue of a kernel's contraction: the instructions of a fused
// computation that only feed dot or convolution operands. The kernel
// computes them again each time the contraction loads those operands'
// blocks into VMEM, so their vector work is paid once per load, not once
// per element (the planner fuses such producers, compiler/fusion/heuristic.cc;
// XLA fusions kept as written may hold them too).
//
// Pure function over an immutable computation; thread-safe.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "compiler/hlo/computation.h"

namespace kiln::runtime::timing {

// For each prologue instruction of `fused`, the parameter number of `fused`
// its blocks are computed from: of the parameters it reads through the
// prologue, the one with the most bytes (-1 when it reads none, an iota).
std::unordered_map<const hlo::Instruction*, int64_t> PrologueSources(const hlo::Computation& fused);

}  // namespace kiln::runtime::timing
