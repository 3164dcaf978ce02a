// Structural equality of HLO modules: what a print/parse round trip must
// preserve.
//
// Two modules are equal when they have the same name, header attributes and
// entry_computation_layout, and the same computations in the same order
// (name, ENTRY flag, execution_thread, root), each with the same
// instructions in the same order: name, opcode (and wrapped opcode of async
// ops), exact shape (layout and dynamic dimensions included), operands by
// position in their computation, attributes (name, kind, value text, called
// computations and control predecessors by name, braced flag), parameter
// number and literal (bit-exact, Literal::operator==).
//
// Derived data (users, called_computations(), control_predecessors(),
// source lines) is not compared. Reads both modules only; safe to call
// concurrently with other readers.
#pragma once

#include <string>

#include "compiler/hlo/module.h"

namespace kiln::hlo {

// True when `a` and `b` are structurally equal. Otherwise returns false and,
// when `why` is not null, sets it to the first difference found, e.g.
// "computation %main instruction 12 (%add.3): shape f32[2] vs f32[3]".
bool ModulesEqual(const Module& a, const Module& b, std::string* why = nullptr);

}  // namespace kiln::hlo
