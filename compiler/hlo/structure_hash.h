// The structure of a module: its graph of operations without the shapes,
// constants and attributes that fill it in.
//
// Two compiles of one training step whose batch size or learning-rate
// constant changed have different keys and the same structure; two
// programs that merely share a module name ("main", "jit_train_step") do
// not. Recompile diagnostics group a name's programs by it, so a "storm" is
// one program compiled again and again, not every module called main.
//
// Hashed: each instruction's opcode (and parameter number), its operands'
// hashes in order, its called computations' hashes; a computation's root;
// the module's entry. Not hashed: shapes, element types, literals,
// attributes, names, metadata, instruction order. Pure; thread-safe (reads
// the module only); iterative, so any depth of chain is fine.
#pragma once

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

// The structure hash of `module` (zero for a module without an entry).
Hash128 StructureHash(const Module& module);

}  // namespace kiln::hlo
