// Which instructions passes must not delete, merge or move.
//
// Pure functions over the IR; thread-safe for concurrent reads.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// True for instructions whose execution is observable beyond their result
// or whose result is not a function of their operands: rng ops,
// collectives, send/recv, infeed/outfeed, async and copy-start/done pairs,
// custom calls marked custom_call_has_side_effect=true, and while,
// conditional and call (their bodies are not inspected).
bool HasSideEffect(const hlo::Instruction& instr);

// True when `instr` may be merged with an identical instruction: no side
// effect, no control predecessors, not a parameter, not a custom call, and
// for constants a literal that is not elided.
bool IsCseCandidate(const hlo::Instruction& instr);

}  // namespace kiln::passes
