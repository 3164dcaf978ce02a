// Refining a module's dynamic dimensions (`f32[?,4]`, StableHLO's dynamic
// ops) from what a caller knows of its arguments: concrete shapes (the
// kiln commands' --arg-shapes, the server's arg_shapes) or, without them,
// the shapes of a run's inputs; JAX's dimension arguments (the leading
// integer scalars such a module takes, whose values shape computations
// read) take the value given in the inputs or, when every dynamic
// dimension was given one size, that size. The one step the kiln commands
// and the server share (shape_refinement.h does the rewriting).
//
// Pure; thread-safe. Errors are refinement's or the refined module's
// verifier's; what still cannot compile is refusals.h's to say.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"

namespace kiln::stablehlo {

// What refinement took for the dimension arguments it was not given: by
// parameter number, the value a random input of that parameter must hold.
struct DimensionArguments {
  std::vector<std::optional<int64_t>> values;
};

// Refines `module` in place when it needs it (a module with no dynamic
// dimension, or with neither shapes nor inputs given, is left as it is),
// then verifies the result.
Result<DimensionArguments> RefineFromArguments(hlo::Module& module, const std::vector<hlo::Shape>& arg_shapes,
                                               const std::vector<hlo::Literal>& input_arguments = {});

// Gives the dimension arguments among `args` (random inputs) their values.
void ApplyDimensionArguments(const DimensionArguments& dims, std::vector<hlo::Literal>& args);

}  // namespace kiln::stablehlo
