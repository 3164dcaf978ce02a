// Shape refinement of HLO modules with dynamic dimensions (`f32[?,4]`) and
// the dynamic-shape custom calls of dynamic_ops.h, as StableHLO's
// refine-arguments and refine-shapes passes do: the entry's parameters take
// concrete shapes, every instruction's shape is inferred again from its
// operands (compiler/hlo/shape_inference.h), callees of calls, loops and
// conditionals are refined with their operands' shapes, the small integer
// computations that make shapes are folded (shape_folding.h), and each
// dynamic op whose shape operands are then known becomes its static op.
//
// Works on modules the StableHLO front end makes and on HLO text alike.
// Errors name the instruction or parameter and the dimension; on failure
// the module may be partly refined and should be discarded. Not
// thread-safe for the module it changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::stablehlo {

struct RefineOptions {
  // Shapes of the entry's parameters, by number (empty: all as declared;
  // fewer: the rest as declared). A dynamic dimension takes the size given;
  // a static one must be given its own size.
  std::vector<hlo::Shape> parameter_shapes;
  // Values of scalar integer parameters by number (JAX's dimension
  // variables, which shape computations read); unknown when absent.
  std::vector<std::optional<int64_t>> parameter_values;
};

// True when the module has a dynamic dimension anywhere or a dynamic-shape
// custom call (dynamic_ops.h): what RefineShapes would change.
bool NeedsRefinement(const hlo::Module& module);

Status RefineShapes(hlo::Module& module, const RefineOptions& options);

// The first dynamic dimension left in the module, described for a user
// ("parameter 1 (Arg_1) of main: dimension 0 of f32[?,5,3] is dynamic"),
// or nullopt when every shape is static.
std::optional<std::string> FirstDynamicDimension(const hlo::Module& module);

}  // namespace kiln::stablehlo
