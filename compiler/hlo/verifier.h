// HLO verifier: checks that a parsed (or built) module is well formed before
// anything downstream (fingerprint, passes, evaluator) relies on it.
//
// Structure: the entry exists; every computation has a root that belongs to
// it, parameters numbered 0..n-1 without gaps or duplicates, operands and
// control predecessors that are non-null and in the same computation, no
// cycles through operands and control predecessors; called computations
// exist, belong to the module and do not call themselves; opcodes with a fixed
// operand count have it. Shapes: for the opcodes listed in shape_inference.h
// the result shape is inferred from the operands and attributes and compared
// with the declared one ignoring layouts (dynamic dimensions compare
// leniently); callers of computations (call, fusion, while, conditional,
// reduce, map, sort, ...) must match the callee signatures; the module's
// entry_computation_layout must match the entry. Collectives, custom calls,
// async and send/recv ops get structural checks only.
//
// Errors name the computation and the instruction and, when known, the
// source line: "instruction %dot.3 in computation %main (line 12): lhs
// contracting dimension 1 has size 17 but rhs contracting dimension 0 has
// size 16". Verification stops at the first error. It never crashes on bad
// IR (null pointers, out-of-range attributes, missing parameters) and uses no
// recursion proportional to graph depth.
//
// Reads the module only; thread-safe for concurrent verification of the same
// or different modules.
#pragma once

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct VerifierOptions {
  // Accept floating-point operands and results of different precisions
  // where XLA's verifier does with allow_mixed_precision (f32 + bf16 operands,
  // a bf16 reduce with an f32 reducer, ...). On by default, as in the
  // configuration XLA verifies its own test modules with (HloTestBase); set
  // it to false for the stricter default of XLA's HloVerifier class.
  bool allow_mixed_precision = true;
};

Status VerifyModule(const Module& module, const VerifierOptions& options = {});

// Verifies one computation: its structure and the shapes of its
// instructions. Computations it calls are used for signature checks but not
// verified themselves; if the computation belongs to a module, they must be
// computations of that module.
Status VerifyComputation(const Computation& computation, const VerifierOptions& options = {});

}  // namespace kiln::hlo
