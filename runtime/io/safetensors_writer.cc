// SerializeSafetensors: header JSON (in tensor order) + packed tensor bytes.
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/io/file_bytes.h"
#include "runtime/io/safetensors.h"
#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

Status CheckTensor(const NamedTensor& tensor, std::set<std::string_view>& names) {
  if (tensor.name.empty()) return InvalidArgumentError("a tensor has an empty name");
  if (tensor.name == "__metadata__") return InvalidArgumentError("\"__metadata__\" is not a tensor name");
  if (!names.insert(tensor.name).second) {
    return InvalidArgumentError(StrCat("tensor \"", tensor.name, "\" given twice"));
  }
  const hlo::Literal& value = tensor.value;
  if (!value.shape().IsArray()) {
    return InvalidArgumentError(
        StrCat("tensor \"", tensor.name, "\" has shape ", value.shape().ToString(), ", not an array"));
  }
  if (value.elided()) return InvalidArgumentError(StrCat("tensor \"", tensor.name, "\" has no data"));
  if (!SafetensorsDtypeName(value.shape().element_type())) {
    return InvalidArgumentError(StrCat("tensor \"", tensor.name, "\": element type ",
                                       hlo::PrimitiveTypeName(value.shape().element_type()),
                                       " has no safetensors dtype"));
  }
  int64_t bytes = value.shape().ByteSize();
  if (bytes < 0 || static_cast<uint64_t>(bytes) != value.data().size()) {
    return InvalidArgumentError(StrCat("tensor \"", tensor.name, "\" holds ", value.data().size(), " bytes, its shape ",
                                       value.shape().ToString(), " needs ", bytes));
  }
  return Ok();
}

}  // namespace

Result<std::string> SerializeSafetensors(const SafetensorsFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const NamedTensor& tensor : file.tensors) {
    Status ok = CheckTensor(tensor, names);
    if (!ok) return ok.error().WithContext("safetensors");
    uint64_t end = offset + tensor.value.data().size();
    header[tensor.name] = {
        {"dtype", *SafetensorsDtypeName(tensor.value.shape().element_type())},
        {"shape", tensor.value.shape().dimensions()},
        {"data_offsets", {offset, end}},
    };
    offset = end;
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("safetensors: a tensor name or metadata string is not valid "
                                            "UTF-8: ") +
                                e.what());
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header_text.size() + offset);
  uint64_t size = header_text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out += header_text;
  for (const NamedTensor& tensor : file.tensors) {
    const auto& data = tensor.value.data();
    out.append(reinterpret_cast<const char*>(data.data()), data.size());
  }
  return out;
}

Status WriteSafetensorsFile(const std::string& path, const SafetensorsFile& file) {
  auto bytes = SerializeSafetensors(file);
  if (!bytes) return bytes.error().WithContext(path);
  return WriteFileBytes(path, *bytes);
}

}  // namespace kiln::runtime::io
