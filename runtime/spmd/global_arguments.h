// The arguments and result of a program for a slice, as its caller sees
// them.
//
// A program partitioned from a module with global shapes (Program's global
// signature) takes the module's global arguments: each chip gets its shard,
// split by the parameter's sharding, and the chips' results are assembled
// into the global result by the result's sharding. Any other program for a
// slice is a per-chip program: every chip gets the caller's arguments and
// the result is chip 0's. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "runtime/format/program.h"

namespace kiln::runtime {

// True when the program takes global arguments (it has a global signature).
bool TakesGlobalArguments(const Program& program);

// The shapes the caller's arguments must have: the global ones, or the
// program's own parameter shapes (`own`).
Result<std::vector<hlo::Shape>> CallerParameterShapes(const Program& program, std::vector<hlo::Shape> own);

// chip d's arguments at [d], for `chips` chips.
Result<std::vector<std::vector<hlo::Literal>>> ChipArguments(const Program& program, std::span<const hlo::Literal> args,
                                                             int64_t chips);

// The program's result from every chip's (chip d's at [d]).
Result<hlo::Literal> ProgramResult(const Program& program, std::vector<hlo::Literal> chip_results);

}  // namespace kiln::runtime
