// Names of the tensors that carry a program's inputs and outputs in
// safetensors (kiln run --inputs/--outputs, the execute endpoint).
//
// Parameter i is the tensor "i"; output i (element i of a tuple root, or the
// whole root when it is not a tuple) is "i". Values nested in tuples take
// dotted names: element j of tuple parameter i is "i.j", element 1 of
// output 0 when output 0 is itself a tuple is "0.1".
//
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"
#include "runtime/io/safetensors.h"

namespace kiln::runtime::io {

// The program's result as named arrays, in output order.
std::vector<NamedTensor> OutputTensors(const hlo::Literal& result);

// Builds argument i from the tensor(s) named for parameter i. Each tensor's
// element type and dimensions must equal the parameter's; the argument takes
// the parameter's shape (its layout and dynamic bounds). Errors name the
// parameter and tensor: a missing tensor, a shape mismatch, or a tensor no
// parameter uses.
Result<std::vector<hlo::Literal>> ArgumentsFromTensors(
    const SafetensorsFile& file, std::span<const hlo::Shape> parameter_shapes);

// Checks literal arguments (from a literal file) against the parameters the
// same way, and gives each the parameter's shape.
Result<std::vector<hlo::Literal>> MatchArguments(std::vector<hlo::Literal> args,
                                                 std::span<const hlo::Shape> parameter_shapes);

}  // namespace kiln::runtime::io
