// Loop state layouts: the layout of an array a while loop carries from one
// iteration to the next, chosen as LayoutAssignment chooses other values'
// (DenserMinorToMajor: a layout whose tiled dimensions hold data), as XLA's
// layout assignment gives a loop's state one layout in its init, body,
// condition and result. A scanned transformer saves each layer's attention
// heads for the backward pass in a stacked bf16[layers, batch, seq, 8, 128]
// state: as written, every tile holds 8 of its 16 rows; laid out
// {4,2,3,1,0} its tiles are seq x head_dim, full.
//
// A state element takes the layout when the loop and everything that
// reads or writes it keep values unchanged under it: the body and
// condition are called by this loop alone and read the element only with
// ops that take any layout (array computations, reductions, a dynamic
// update of it) or pass it back unchanged; the body's root is a tuple
// whose element is either that pass-through or a value computed for the
// root alone (a dynamic-update-slice of the state); the loop's init is a
// tuple only the loop reads; every user of the loop is a get-tuple-element,
// none of them the computation's root. The init's element takes the layout
// itself when it is computed for the loop alone or already has it (the
// result of an earlier loop given the same layout); otherwise a copy is
// inserted before the loop, a transposing kernel counted once. The
// loop's result is read in the new layout by users that take any layout
// and by the inits of loops that chose the same one; any other user reads
// a copy back in the original layout.
//
// Values are unchanged: the evaluator computes on logical indices, and no
// bitcast reads a value whose layout changes. Fusion bodies are skipped.
//
// Stateless; thread-safe across modules.
#pragma once

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::passes {

// Lays out the state of every while loop of `module` that qualifies;
// returns whether anything changed. Fails only when the IR refuses an edit.
Result<bool> AssignLoopStateLayouts(hlo::Module& module);

}  // namespace kiln::passes
