#include "server/api/execute_inputs.h"

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/io/safetensors.h"
#include "server/api/api_reasons.h"
#include "server/api/json_tensors.h"
#include "server/service/executable_signature.h"

namespace kiln::api {
namespace {

std::string Plural(size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

Error Mismatch(const std::string& name, std::string message) {
  return InvalidArgumentError(std::move(message)).WithReason(std::string(kInputMismatch)).ForParameter(name);
}

Error ShapeMismatch(const std::string& name, const hlo::Shape& expected, const hlo::Shape& got) {
  return Mismatch(name, "input '" + name + "': parameter " + name + " is " + service::PlainShapeText(expected) + ", got " +
                            service::PlainShapeText(got))
      .ExpectedGot(service::PlainShapeText(expected), service::PlainShapeText(got));
}

// The literal for the tensor(s) named for `shape` under `name`.
Result<hlo::Literal> Gather(const runtime::io::SafetensorsFile& file, const hlo::Shape& shape, const std::string& name,
                            std::set<std::string>& used, size_t parameters) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      auto element = Gather(file, shape.tuple_shapes(i), name + "." + std::to_string(i), used, parameters);
      if (!element) return element;
      elements.push_back(std::move(*element));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  const hlo::Literal* tensor = file.Find(name);
  if (tensor == nullptr) {
    return std::unexpected(Mismatch(name, "the executable has " + Plural(parameters, "parameter") + ", got " +
                                              Plural(file.tensors.size(), "input") + " (missing '" + name +
                                              "', " + service::PlainShapeText(shape) + ")"));
  }
  used.insert(name);
  if (tensor->shape().element_type() != shape.element_type() ||
      tensor->shape().dimensions() != shape.dimensions()) {
    return std::unexpected(ShapeMismatch(name, shape, tensor->shape()));
  }
  return hlo::Literal::FromData(shape, tensor->data());
}

}  // namespace

Result<std::vector<hlo::Literal>> InputsFromSafetensors(std::string_view body, std::span<const hlo::Shape> parameters) {
  Result<runtime::io::SafetensorsFile> file = runtime::io::ParseSafetensors(body);
  if (!file) return InvalidArgumentError(file.error().ToString()).WithReason(std::string(kInvalidSafetensors));
  std::set<std::string> used;
  std::vector<hlo::Literal> inputs;
  for (size_t i = 0; i < parameters.size(); ++i) {
    auto input = Gather(*file, parameters[i], std::to_string(i), used, parameters.size());
    if (!input) return std::unexpected(input.error());
    inputs.push_back(std::move(*input));
  }
  for (const runtime::io::NamedTensor& tensor : file->tensors) {
    if (!used.contains(tensor.name)) {
      return std::unexpected(Mismatch(tensor.name, "input '" + tensor.name + "' matches no parameter (the executable has " +
                                                       Plural(parameters.size(), "parameter") + ")"));
    }
  }
  return inputs;
}

Result<std::vector<hlo::Literal>> InputsFromJson(std::string_view body, std::span<const hlo::Shape> parameters) {
  nlohmann::json request = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return InvalidArgumentError("the body is not valid JSON").WithReason(std::string(kInvalidJson));
  if (!request.is_object())
    return InvalidArgumentError("expected an object {\"inputs\": [...]}").WithReason(std::string(kInvalidJson));
  for (const auto& [field, ignored] : request.items()) {
    if (field != "inputs")
      return InvalidArgumentError("unknown field '" + field + "'; expected only inputs").WithReason(std::string(kInvalidJson));
  }
  if (!request.contains("inputs") || !request["inputs"].is_array()) {
    return InvalidArgumentError("'inputs' must be an array with one value per parameter").WithReason(std::string(kInvalidJson));
  }
  const nlohmann::json& values = request["inputs"];
  if (values.size() != parameters.size()) {
    const size_t first_bad = std::min(values.size(), parameters.size());
    std::string detail = values.size() < parameters.size() ? " (missing '" + std::to_string(first_bad) + "')"
                                                           : " (extra '" + std::to_string(first_bad) + "')";
    return std::unexpected(Mismatch(std::to_string(first_bad),
                                    "the executable has " + Plural(parameters.size(), "parameter") + ", got " +
                                        Plural(values.size(), "input") + detail));
  }
  std::vector<hlo::Literal> inputs;
  for (size_t i = 0; i < parameters.size(); ++i) {
    auto input = LiteralFromJson(values[i], parameters[i], std::to_string(i));
    if (!input) return std::unexpected(input.error());
    inputs.push_back(std::move(*input));
  }
  return inputs;
}

}  // namespace kiln::api
