// Small tensors as JSON, the `Tensor` and `Value` schemas of the API:
//
//   {"shape": [2, 3], "dtype": "f32", "data": [1, 2, 3, 4, 5, 6]}
//   {"tuple": [<value>, ...]}
//
// Data is row-major; floats are numbers or "nan", "inf", "-inf" (f16 and
// bf16 rounded to nearest even); pred is booleans; integers must fit their
// type. Only pred, s8..s64, u8..u64, f16, bf16, f32 and f64 travel as JSON;
// other types need safetensors. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"

namespace kiln::api {

// Reads the value for parameter `name` ("1", "1.0") that must have
// `expected`'s element types and dimensions; the literal takes `expected`
// (its layout). A value of another shape or type is 422 input_mismatch
// naming `name`; malformed JSON values are 400 invalid_inputs.
Result<hlo::Literal> LiteralFromJson(const nlohmann::json& value, const hlo::Shape& expected, const std::string& name);

// The JSON value of `literal` (tuples as {"tuple": [...]}). Fails for an
// element type JSON does not carry.
Result<nlohmann::json> LiteralToJson(const hlo::Literal& literal);

}  // namespace kiln::api
