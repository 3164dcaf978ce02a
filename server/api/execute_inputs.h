// The inputs of an execute request, checked against the executable's
// parameters.
//
// Safetensors bodies name parameter i "i" and the leaves of a tuple
// parameter "i.0", "i.1", ... (runtime/io/tensor_names.h); JSON bodies are
// the ExecuteRequest schema, one value per parameter. Malformed bodies are
// 400 (invalid_safetensors, invalid_json, invalid_inputs); well-formed
// inputs of the wrong count, shape or type are 422 input_mismatch naming
// the first offending parameter, with the expected and received shapes.
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"

namespace kiln::api {

Result<std::vector<hlo::Literal>> InputsFromSafetensors(std::string_view body, std::span<const hlo::Shape> parameters);

Result<std::vector<hlo::Literal>> InputsFromJson(std::string_view body, std::span<const hlo::Shape> parameters);

}  // namespace kiln::api
