#include "server/api/json_tensors.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/hlo/float_formats.h"
#include "compiler/hlo/primitive_type.h"
#include "server/api/api_reasons.h"
#include "server/service/executable_signature.h"

namespace kiln::api {
namespace {

using hlo::PrimitiveType;
using nlohmann::json;

bool TravelsAsJson(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

Error BadValue(const std::string& name, const std::string& why) {
  return InvalidArgumentError("input '" + name + "': " + why).WithReason(std::string(kInvalidInputs));
}

Error Mismatch(const std::string& name, const hlo::Shape& expected, std::string got) {
  return InvalidArgumentError("input '" + name + "': parameter " + name + " is " + service::PlainShapeText(expected) + ", got " +
                              got)
      .WithReason(std::string(kInputMismatch))
      .ForParameter(name)
      .ExpectedGot(service::PlainShapeText(expected), got);
}

// A float element: a number or "nan", "inf", "-inf".
std::optional<double> FloatOf(const json& element) {
  if (element.is_number()) return element.get<double>();
  if (!element.is_string()) return std::nullopt;
  const std::string& text = element.get_ref<const std::string&>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

template <typename T>
void Store(uint8_t* out, T value) {
  std::memcpy(out, &value, sizeof(T));
}

// Writes one element of `type`. Fails out_of_range for a number the type
// cannot hold, invalid_argument for a value of the wrong kind.
Status WriteElement(PrimitiveType type, const json& element, uint8_t* out) {
  if (type == PrimitiveType::kPred) {
    if (!element.is_boolean()) return InvalidArgumentError("pred elements must be true or false");
    *out = element.get<bool>() ? 1 : 0;
    return Ok();
  }
  if (hlo::IsFloatingPoint(type)) {
    std::optional<double> value = FloatOf(element);
    if (!value) return InvalidArgumentError("floating-point elements must be numbers or \"nan\", \"inf\", \"-inf\"");
    switch (type) {
      case PrimitiveType::kF64:
        Store(out, *value);
        break;
      case PrimitiveType::kF32:
        Store(out, static_cast<float>(*value));
        break;
      default:
        Store(out, static_cast<uint16_t>(hlo::EncodeNarrowFloat(*hlo::NarrowFloatFormat(type), *value)));
    }
    return Ok();
  }
  if (!element.is_number_integer()) return InvalidArgumentError("integer elements must be whole numbers");
  const int bits = hlo::BitWidth(type);
  if (hlo::IsSignedInteger(type)) {
    if (element.is_number_unsigned() && element.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
      return OutOfRangeError("out of range");
    }
    const int64_t value = element.get<int64_t>();
    const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    if (value > max || value < -max - 1) return OutOfRangeError("out of range");
    switch (bits) {
      case 8: Store(out, static_cast<int8_t>(value)); break;
      case 16: Store(out, static_cast<int16_t>(value)); break;
      case 32: Store(out, static_cast<int32_t>(value)); break;
      default: Store(out, value);
    }
    return Ok();
  }
  if (!element.is_number_unsigned() && element.get<int64_t>() < 0) return OutOfRangeError("out of range");
  const uint64_t value = element.get<uint64_t>();
  const uint64_t max = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  if (value > max) return OutOfRangeError("out of range");
  switch (bits) {
    case 8: Store(out, static_cast<uint8_t>(value)); break;
    case 16: Store(out, static_cast<uint16_t>(value)); break;
    case 32: Store(out, static_cast<uint32_t>(value)); break;
    default: Store(out, value);
  }
  return Ok();
}

Result<hlo::Literal> TupleFromJson(const json& value, const hlo::Shape& expected, const std::string& name) {
  if (value.size() != 1) return BadValue(name, "a tuple value has only the field 'tuple'");
  const json& elements = value["tuple"];
  if (!elements.is_array()) return BadValue(name, "'tuple' must be an array of values");
  if (!expected.IsTuple()) return Mismatch(name, expected, "a tuple of " + std::to_string(elements.size()));
  if (elements.size() != expected.tuple_shapes().size()) {
    return Mismatch(name, expected, "a tuple of " + std::to_string(elements.size()) + " elements");
  }
  std::vector<hlo::Literal> literals;
  for (size_t i = 0; i < elements.size(); ++i) {
    auto element = LiteralFromJson(elements[i], expected.tuple_shapes(i), name + "." + std::to_string(i));
    if (!element) return std::unexpected(element.error());
    literals.push_back(std::move(*element));
  }
  return hlo::Literal::Tuple(std::move(literals));
}

}  // namespace

Result<hlo::Literal> LiteralFromJson(const json& value, const hlo::Shape& expected, const std::string& name) {
  if (!value.is_object()) return BadValue(name, "expected a tensor object or {\"tuple\": [...]}");
  if (value.contains("tuple")) return TupleFromJson(value, expected, name);
  for (const auto& [field, ignored] : value.items()) {
    if (field != "shape" && field != "dtype" && field != "data") {
      return BadValue(name, "unknown field '" + field + "'; a tensor has shape, dtype and data");
    }
  }
  const json* shape = value.contains("shape") ? &value["shape"] : nullptr;
  const json* dtype = value.contains("dtype") ? &value["dtype"] : nullptr;
  const json* data = value.contains("data") ? &value["data"] : nullptr;
  if (!shape || !shape->is_array()) return BadValue(name, "'shape' must be an array of dimensions");
  if (!dtype || !dtype->is_string()) return BadValue(name, "'dtype' must be a string such as \"f32\"");
  if (!data || !data->is_array()) return BadValue(name, "'data' must be an array of elements");
  std::optional<PrimitiveType> type = hlo::PrimitiveTypeFromName(dtype->get<std::string>());
  if (!type || !TravelsAsJson(*type)) {
    return BadValue(name, "dtype '" + dtype->get<std::string>() +
                              "' cannot travel as JSON (pred, s8..s64, u8..u64, f16, bf16, f32, f64); use safetensors");
  }
  std::vector<int64_t> dims;
  for (const json& dim : *shape) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0 || dim.get<int64_t>() > (int64_t{1} << 40)) {
      return BadValue(name, "shape dimensions must be non-negative integers");
    }
    dims.push_back(dim.get<int64_t>());
  }
  hlo::Shape got(*type, dims);
  if (expected.IsTuple() || expected.element_type() != *type || expected.dimensions() != dims) {
    return Mismatch(name, expected, service::PlainShapeText(got));
  }
  const int64_t count = expected.ElementCount();
  if (count < 0 || data->size() != static_cast<size_t>(count)) {
    return BadValue(name, "'data' has " + std::to_string(data->size()) + " elements, the shape needs " +
                              std::to_string(count));
  }
  hlo::Literal literal(expected);
  const int width = hlo::HostByteWidth(*type);
  uint8_t* out = literal.mutable_data().data();
  for (int64_t i = 0; i < count; ++i) {
    if (Status written = WriteElement(*type, (*data)[i], out + i * width); !written) {
      const std::string what = "element " + std::to_string(i) + ": " + written.error().message;
      if (written.error().code != ErrorCode::kOutOfRange) return BadValue(name, what);
      // A number the parameter's type cannot hold: the input does not match it.
      return InvalidArgumentError("input '" + name + "': " + what + " for " +
                                  std::string(hlo::PrimitiveTypeName(*type)))
          .WithReason(std::string(kInputMismatch))
          .ForParameter(name);
    }
  }
  return literal;
}

Result<json> LiteralToJson(const hlo::Literal& literal) {
  const hlo::Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    json elements = json::array();
    for (const hlo::Literal& element : literal.tuple_elements()) {
      KILN_ASSIGN_OR_RETURN(json value, LiteralToJson(element));
      elements.push_back(std::move(value));
    }
    return json{{"tuple", std::move(elements)}};
  }
  const PrimitiveType type = shape.element_type();
  if (!TravelsAsJson(type)) {
    return UnimplementedError("output of type " + std::string(hlo::PrimitiveTypeName(type)) +
                              " cannot travel as JSON; ask for safetensors (Accept: application/vnd.safetensors)");
  }
  json data = json::array();
  const int64_t count = literal.element_count();
  const uint8_t* bytes = literal.data().data();
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* at = bytes + i * hlo::HostByteWidth(type);
    auto load = [at]<typename T>(T) {
      T v;
      std::memcpy(&v, at, sizeof(T));
      return v;
    };
    switch (type) {
      case PrimitiveType::kPred: data.push_back(*at != 0); break;
      case PrimitiveType::kS8: data.push_back(load(int8_t{})); break;
      case PrimitiveType::kS16: data.push_back(load(int16_t{})); break;
      case PrimitiveType::kS32: data.push_back(load(int32_t{})); break;
      case PrimitiveType::kS64: data.push_back(load(int64_t{})); break;
      case PrimitiveType::kU8: data.push_back(load(uint8_t{})); break;
      case PrimitiveType::kU16: data.push_back(load(uint16_t{})); break;
      case PrimitiveType::kU32: data.push_back(load(uint32_t{})); break;
      case PrimitiveType::kU64: data.push_back(load(uint64_t{})); break;
      default: {
        const double value = literal.GetAsDouble(i);
        if (std::isnan(value)) {
          data.push_back("nan");
        } else if (std::isinf(value)) {
          data.push_back(value > 0 ? "inf" : "-inf");
        } else {
          data.push_back(value);
        }
      }
    }
  }
  return json{{"shape", shape.dimensions()}, {"dtype", hlo::PrimitiveTypeName(type)}, {"data", std::move(data)}};
}

}  // namespace kiln::api
