// safetensors: named tensors in one buffer, as Hugging Face's `safetensors`
// writes them:
//
//   u64 little-endian N | N bytes of JSON header | tensor bytes
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end]} (offsets relative to the start of the tensor bytes) and may
// hold "__metadata__": {string: string}. Tensors are row-major and
// little-endian.
//
// The reader trusts nothing: the HTTP server hands it bytes from the
// network. It checks the header length against the buffer (and a 100 MB
// cap), that the header is a JSON object with the fields above and nothing
// else, that names are unique and non-empty, that dtypes are known and
// shapes valid, that every tensor's byte size equals shape x dtype, and that
// the tensors tile the data area exactly (in bounds, no overlaps, no gaps).
// Every failure is an Error saying which tensor and what was wrong; it never
// crashes or allocates more than the buffer implies.
//
// Tensors map to hlo::Literal arrays. dtypes: BOOL (pred), U8, I8, U16, I16,
// F16, BF16, U32, I32, F32, U64, I64, F64, F8_E5M2 (f8e5m2), F8_E4M3
// (f8e4m3fn, as PyTorch's float8_e4m3fn), C64. Other element types (sub-byte
// integers, other f8 variants, c128) have no safetensors dtype and are
// rejected by the writer.
//
// Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/primitive_type.h"

namespace kiln::runtime::io {

struct NamedTensor {
  std::string name;
  hlo::Literal value;  // an array literal
};

struct SafetensorsFile {
  // In data-offset order when read; written in this order.
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;

  // The tensor called `name`, or nullptr.
  const hlo::Literal* Find(std::string_view name) const;
};

// Largest header the reader accepts (the reference implementation's limit).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// "F32" for f32 and so on; nullopt for types safetensors cannot hold.
std::optional<std::string_view> SafetensorsDtypeName(hlo::PrimitiveType type);
std::optional<hlo::PrimitiveType> PrimitiveTypeFromSafetensorsDtype(std::string_view dtype);

// Parses a whole safetensors buffer.
Result<SafetensorsFile> ParseSafetensors(std::span<const uint8_t> bytes);
Result<SafetensorsFile> ParseSafetensors(std::string_view bytes);
Result<SafetensorsFile> ReadSafetensorsFile(const std::string& path);

// Serializes tensors in order, packed; the header is padded with spaces to a
// multiple of 8 bytes so the data is aligned. Fails on a tuple or elided
// literal, a duplicate or empty name, or an element type with no dtype.
Result<std::string> SerializeSafetensors(const SafetensorsFile& file);
Status WriteSafetensorsFile(const std::string& path, const SafetensorsFile& file);

}  // namespace kiln::runtime::io
