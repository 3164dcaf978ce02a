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

namespace kiln::tools {

// "s64[],f32[3,5,3]": one shape per entry parameter, in order.
Result<std::vector<hlo::Shape>> ParseArgShapes(std::string_view text);

// What refinement took for JAX's dimension arguments: by parameter number,
// the value a random input of that parameter must be given.
struct DimensionArguments {
  std::vector<std::optional<int64_t>> values;
};

// Refines `module` (when it needs it) from `arg_shapes` (may be empty) or,
// without them, from `input_arguments` (a run's inputs, may be empty); a
// dimension argument without a value takes the one size every dynamic
// dimension was given, when there is one. Then verifies the module and
// refuses what cannot compile. `path` names the module in errors.
Result<DimensionArguments> PrepareForCompile(hlo::Module& module, const std::string& path,
                                             const std::vector<hlo::Shape>& arg_shapes,
                                             const std::vector<hlo::Literal>& input_arguments = {});

// Gives the dimension arguments among `args` (random inputs) their values.
void ApplyDimensionArguments(const DimensionArguments& dims, std::vector<hlo::Literal>& args);

}  // namespace kiln::tools
