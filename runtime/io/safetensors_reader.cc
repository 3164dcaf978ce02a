// ParseSafetensors: validates a safetensors buffer and builds literals.
#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <set>

#include "compiler/hlo/shape.h"
#include "runtime/io/file_bytes.h"
#include "runtime/io/safetensors.h"
#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

using json = nlohmann::json;

// One header entry, checked but not yet materialized.
struct TensorEntry {
  std::string name;
  hlo::PrimitiveType type;
  std::vector<int64_t> dims;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Parses the header text. Rejects duplicate keys in any object (nlohmann
// would keep the last one silently). Exceptions stay inside this function.
Result<json> ParseHeaderJson(std::string_view text) {
  std::vector<std::set<std::string>> keys_per_object;
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_per_object.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys_per_object.pop_back();
    } else if (event == json::parse_event_t::key && !keys_per_object.empty() &&
               !keys_per_object.back().insert(parsed.get<std::string>()).second &&
               duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, callback);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) return InvalidArgumentError(StrCat("header names \"", duplicate, "\" twice"));
  if (!header.is_object()) return InvalidArgumentError("header is not a JSON object");
  return header;
}

Status CheckMetadata(const json& metadata, std::map<std::string, std::string>& out) {
  if (!metadata.is_object()) return InvalidArgumentError("__metadata__ is not an object");
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) {
      return InvalidArgumentError(StrCat("__metadata__ value of \"", key, "\" is not a string"));
    }
    out.emplace(key, value.get<std::string>());
  }
  return Ok();
}

// Checks one tensor description; errors say what is wrong, the caller adds
// which tensor.
Result<TensorEntry> CheckTensorEntry(const std::string& name, const json& info) {
  if (!info.is_object()) return InvalidArgumentError("description is not an object");
  for (const auto& [key, value] : info.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      return InvalidArgumentError(StrCat("unknown field \"", key, "\""));
    }
  }
  TensorEntry entry{.name = name};
  auto dtype = info.find("dtype");
  if (dtype == info.end() || !dtype->is_string()) return InvalidArgumentError("dtype missing or not a string");
  auto type = PrimitiveTypeFromSafetensorsDtype(dtype->get<std::string>());
  if (!type) return InvalidArgumentError(StrCat("unsupported dtype \"", dtype->get<std::string>(), "\""));
  entry.type = *type;

  auto shape = info.find("shape");
  if (shape == info.end() || !shape->is_array()) return InvalidArgumentError("shape missing or not an array");
  if (shape->size() > static_cast<size_t>(hlo::kMaxRank)) {
    return InvalidArgumentError(StrCat("shape has rank ", shape->size(), ", more than ", hlo::kMaxRank));
  }
  for (const json& dim : *shape) {
    if (!dim.is_number_unsigned() || dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgumentError(StrCat("shape ", shape->dump(), " has an entry that is not a non-negative integer"));
    }
    entry.dims.push_back(dim.get<int64_t>());
  }

  auto offsets = info.find("data_offsets");
  if (offsets == info.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    return InvalidArgumentError("data_offsets missing or not [begin, end] with non-negative integers");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.begin > entry.end) {
    return InvalidArgumentError(StrCat("data_offsets [", entry.begin, ", ", entry.end, "] end before they begin"));
  }
  return entry;
}

// Bytes of shape x dtype, or nullopt when the product overflows.
std::optional<uint64_t> TensorBytes(const TensorEntry& entry) {
  if (std::ranges::find(entry.dims, 0) != entry.dims.end()) return 0;
  uint64_t bytes = static_cast<uint64_t>(hlo::HostByteWidth(entry.type));
  for (int64_t dim : entry.dims) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes)) return std::nullopt;
  }
  return bytes;
}

// The tensors must cover [0, data_size) exactly, in offset order.
Status CheckTiling(std::vector<TensorEntry>& entries, uint64_t data_size) {
  std::ranges::sort(entries, [](const TensorEntry& a, const TensorEntry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& entry : entries) {
    if (entry.begin < covered) {
      return InvalidArgumentError(StrCat("tensor \"", entry.name, "\" at [", entry.begin, ", ", entry.end,
                                         ") overlaps tensor \"", previous->name, "\" at [", previous->begin, ", ",
                                         previous->end, ")"));
    }
    if (entry.begin > covered) {
      return InvalidArgumentError(StrCat(entry.begin - covered, " bytes at [", covered, ", ", entry.begin,
                                         ") before tensor \"", entry.name, "\" belong to no tensor"));
    }
    covered = entry.end;
    previous = &entry;
  }
  if (covered != data_size) {
    return InvalidArgumentError(StrCat(data_size - covered, " bytes at the end of the data belong to no tensor"));
  }
  return Ok();
}

Result<hlo::Literal> MakeLiteral(const TensorEntry& entry, const uint8_t* data) {
  std::vector<uint8_t> bytes(data + entry.begin, data + entry.end);
  if (entry.type == hlo::PrimitiveType::kPred) {
    auto bad = std::ranges::find_if(bytes, [](uint8_t b) { return b > 1; });
    if (bad != bytes.end()) {
      return InvalidArgumentError(StrCat("safetensors: tensor \"", entry.name, "\": BOOL element ", bad - bytes.begin(),
                                         " has byte value ", *bad, ", not 0 or 1"));
    }
  }
  return hlo::Literal::FromData(hlo::Shape(entry.type, entry.dims), std::move(bytes));
}

}  // namespace

Result<SafetensorsFile> ParseSafetensors(std::span<const uint8_t> bytes) {
  if (bytes.size() < 8) {
    return InvalidArgumentError(
        StrCat("safetensors: truncated: ", bytes.size(), " bytes, need at least 8 for the header length"));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  if (header_size > kMaxSafetensorsHeaderBytes) {
    return InvalidArgumentError(StrCat("safetensors: header length ", header_size, " exceeds the limit of ",
                                       kMaxSafetensorsHeaderBytes, " bytes"));
  }
  if (header_size > bytes.size() - 8) {
    return InvalidArgumentError(StrCat("safetensors: truncated: header length ", header_size, " but only ",
                                       bytes.size() - 8, " bytes follow the length field"));
  }
  std::string_view header_text(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  auto header = ParseHeaderJson(header_text);
  if (!header) return header.error().WithContext("safetensors");

  SafetensorsFile file;
  std::vector<TensorEntry> entries;
  const uint8_t* data = bytes.data() + 8 + header_size;
  uint64_t data_size = bytes.size() - 8 - header_size;
  for (const auto& [name, info] : header->items()) {
    if (name == "__metadata__") {
      Status metadata = CheckMetadata(info, file.metadata);
      if (!metadata) return metadata.error().WithContext("safetensors");
      continue;
    }
    if (name.empty()) return InvalidArgumentError("safetensors: a tensor has an empty name");
    auto entry = CheckTensorEntry(name, info);
    if (!entry) {
      return entry.error().WithContext(StrCat("safetensors: tensor \"", name, "\""));
    }
    if (entry->end > data_size) {
      return InvalidArgumentError(StrCat("safetensors: tensor \"", name, "\": data_offsets [", entry->begin, ", ",
                                         entry->end, "] run past the ", data_size, " bytes of data"));
    }
    std::optional<uint64_t> expected = TensorBytes(*entry);
    if (!expected || *expected != entry->end - entry->begin) {
      std::string want = expected ? std::to_string(*expected) + " bytes" : "an overflowing size";
      return InvalidArgumentError(StrCat("safetensors: tensor \"", name, "\": data_offsets [", entry->begin, ", ",
                                         entry->end, "] hold ", entry->end - entry->begin, " bytes but ",
                                         info["dtype"].get<std::string>(), " ", info["shape"].dump(), " needs ", want));
    }
    entries.push_back(std::move(*entry));
  }
  Status tiling = CheckTiling(entries, data_size);
  if (!tiling) return tiling.error().WithContext("safetensors");
  for (const TensorEntry& entry : entries) {
    KILN_ASSIGN_OR_RETURN(hlo::Literal value, MakeLiteral(entry, data));
    file.tensors.push_back({entry.name, std::move(value)});
  }
  return file;
}

Result<SafetensorsFile> ParseSafetensors(std::string_view bytes) {
  return ParseSafetensors(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

Result<SafetensorsFile> ReadSafetensorsFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  auto file = ParseSafetensors(bytes);
  if (!file) return file.error().WithContext(path);
  return file;
}

}  // namespace kiln::runtime::io
