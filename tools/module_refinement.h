// Making a module the kiln commands read ready to compile: its dynamic
// dimensions (`f32[?,4]`, StableHLO's dynamic ops) refined from concrete
// argument shapes (--arg-shapes, or the shapes of `kiln run`'s inputs) and
// JAX's dimension arguments (the leading integer scalars of such a
// module, whose values shape computations read), then what still cannot be
// compiled refused, naming the dimension, op or type
// (compiler/stablehlo/refusals.h).
//
// Pure functions apart from reading `kiln run`'s input files; errors name
// the file. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"
#include "compiler/stablehlo/argument_refinement.h"

namespace kiln::tools {

// "s64[],f32[3,5,3]": one shape per entry parameter, in order.
Result<std::vector<hlo::Shape>> ParseArgShapes(std::string_view text);

// What refinement took for JAX's dimension arguments
// (compiler/stablehlo/argument_refinement.h).
using stablehlo::DimensionArguments;
using stablehlo::ApplyDimensionArguments;

// Refines `module` (stablehlo::RefineFromArguments) from `arg_shapes` (may
// be empty) or, without them, from `input_arguments` (a run's inputs, may
// be empty), then refuses what cannot compile. `path` names the module in
// errors.
Result<DimensionArguments> PrepareForCompile(hlo::Module& module, const std::string& path,
                                             const std::vector<hlo::Shape>& arg_shapes,
                                             const std::vector<hlo::Literal>& input_arguments = {});

}  // namespace kiln::tools
