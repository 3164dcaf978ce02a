// The fingerprint of one kernel's subgraph: the key tuning records are
// stored under, so that a module containing an already-tuned kernel finds
// its records ("transfer").
//
// The key is XXH3-128 over what the kernel computes: each instruction's
// content as the module fingerprint sees it (fingerprinter.h: opcode, shape
// with its layout, constants, semantic attributes, called computations),
// the operand edges among them, which operands come from outside the
// subgraph (the kernel's inputs, known only by their shapes and by how the
// subgraph uses them) and which values are roots (written out). It does not
// depend on names, on where the instructions sit in the computation, on the
// order the caller lists them, or on anything outside the subgraph; control
// edges and channel groups reaching outside are ignored. It holds neither
// chip nor compiler version: a tuning record keeps those beside the key.
//
// Inputs carry no numbers, so two inputs are told apart by their shapes and
// their uses (one round of refinement: the users' content and operand
// positions). Subgraphs that differ only in how inputs that look alike that
// way are shared could collide; such a collision makes a tuning record a
// poorer starting point, never a wrong program.
//
// Thread-safe (reads the computation only).
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/fingerprint.h"

namespace kiln::hlo {

// `instructions` are indices into `computation.instructions()` (for a
// fusion::Kernel, its entry indices), in any order; `roots` the subset whose
// values the kernel writes. Fails, naming the index, on an empty subgraph,
// an index out of range or listed twice, or a root not among
// `instructions`, and on a called computation the module fingerprint would
// reject.
Result<Hash128> FingerprintSubgraph(const Computation& computation, std::span<const int64_t> instructions,
                                    std::span<const int64_t> roots);

}  // namespace kiln::hlo
