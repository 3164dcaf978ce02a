// The verifier's per-opcode rules: how many operands an opcode takes, and
// which opcodes may mix floating-point precisions or must pass their
// operand's type through. Tables only (verifier.cc applies them).
//
// Pure functions; thread-safe.
#pragma once

#include "compiler/hlo/opcode.h"

namespace kiln::hlo::verifier_internal {

// Operand count for opcodes whose arity is fixed; -1 for variadic ones.
int FixedArity(Opcode op);

// Minimum operand count of variadic opcodes whose shapes are checked.
int MinArity(Opcode op);

// Opcodes XLA lets mix floating-point precisions among their operands.
bool AllowsMixedOperands(Opcode op);

// Opcodes whose result must match exactly (no precision change allowed).
bool IsPassThrough(Opcode op);

}  // namespace kiln::hlo::verifier_internal
