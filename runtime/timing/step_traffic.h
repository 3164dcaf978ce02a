// HBM traffic of one step of a loop body or branch (kernel_work.h): the
// step reads each of its operands once and writes its result once, as a
// kernel XLA runs inside a loop does.
//
//  - A broadcast is never materialised: reading one reads its operand.
//  - Slicing ops (dynamic-slice, slice, gather) read only what they take
//    from their first operand; dynamic-update-slice and scatter update
//    their first operand in place (they read and write only the update).
//  - A fusion reads each operand as its fused computation uses it: a
//    parameter only sliced inside moves the slices, anything else moves the
//    whole operand.
//  - Tokens and tuples of no arrays move nothing.
//
// Pure functions of the IR; thread-safe.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::runtime::timing {

// Bytes one run of `instr` as a step moves between HBM and the chip.
double StepTrafficBytes(const hlo::Instruction& instr);

}  // namespace kiln::runtime::timing
