// The HLO text of one kernel: a self-contained module made of a set of entry
// instructions, with the values they read from outside as parameters and
// the values they write as the root.
//
// Used by lowering only. Pure function of its inputs; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/computation.h"

namespace kiln::lowering {

// A value the kernel reads: an entry instruction, arriving as the arrays of
// its shape in depth-first order (one kernel parameter per array).
struct KernelInput {
  const hlo::Instruction* instruction;
};

// `instructions` (entry instructions in topological order) computed with
// `inputs` as parameters; the root is the single array of `roots` when
// there is exactly one array in all of them, else a flat tuple of every
// array of every root in depth-first order.
std::string KernelModuleText(const std::vector<const hlo::Instruction*>& instructions,
                             const std::vector<KernelInput>& inputs,
                             const std::vector<const hlo::Instruction*>& roots);

}  // namespace kiln::lowering
