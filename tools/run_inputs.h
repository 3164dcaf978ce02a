// The arguments of `kiln run`: from a safetensors file, a literal file or a
// random seed, checked against the parameter shapes of the module or of the
// executable being run.
//
// Pure functions apart from reading the named input file; errors name the
// file or flag at fault. Thread-safe.
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"
#include "runtime/format/program.h"
#include "tools/run_command.h"

namespace kiln::tools {

// The entry parameters' shapes of a module.
std::vector<hlo::Shape> ModuleParameterShapes(const hlo::Module& module);

// The arguments --inputs or --input-literals give, whatever the module's
// parameters (tensors "0", "1", ... of a safetensors file); none for
// random inputs or none given. For refining a module's dynamic shapes
// from them (module_refinement.h).
Result<std::vector<hlo::Literal>> ReadInputArguments(const RunOptions& options);

// One argument per parameter from whichever input flag `options` gives; none
// is fine when there are no parameters.
Result<std::vector<hlo::Literal>> LoadArguments(std::span<const hlo::Shape> shapes,
                                                const RunOptions& options);

}  // namespace kiln::tools
