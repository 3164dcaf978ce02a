// The safetensors dtype names and the element types they stand for.
#include <array>
#include <utility>

#include "runtime/io/safetensors.h"

namespace kiln::runtime::io {
namespace {

using hlo::PrimitiveType;

constexpr std::array<std::pair<PrimitiveType, std::string_view>, 16> kDtypes = {{
    {PrimitiveType::kPred, "BOOL"},
    {PrimitiveType::kU8, "U8"},
    {PrimitiveType::kS8, "I8"},
    {PrimitiveType::kU16, "U16"},
    {PrimitiveType::kS16, "I16"},
    {PrimitiveType::kF16, "F16"},
    {PrimitiveType::kBF16, "BF16"},
    {PrimitiveType::kU32, "U32"},
    {PrimitiveType::kS32, "I32"},
    {PrimitiveType::kF32, "F32"},
    {PrimitiveType::kU64, "U64"},
    {PrimitiveType::kS64, "I64"},
    {PrimitiveType::kF64, "F64"},
    {PrimitiveType::kF8E5M2, "F8_E5M2"},
    {PrimitiveType::kF8E4M3FN, "F8_E4M3"},
    {PrimitiveType::kC64, "C64"},
}};

}  // namespace

std::optional<std::string_view> SafetensorsDtypeName(PrimitiveType type) {
  for (const auto& [t, name] : kDtypes) {
    if (t == type) return name;
  }
  return std::nullopt;
}

std::optional<PrimitiveType> PrimitiveTypeFromSafetensorsDtype(std::string_view dtype) {
  for (const auto& [t, name] : kDtypes) {
    if (name == dtype) return t;
  }
  return std::nullopt;
}

const hlo::Literal* SafetensorsFile::Find(std::string_view name) const {
  for (const NamedTensor& tensor : tensors) {
    if (tensor.name == name) return &tensor.value;
  }
  return nullptr;
}

}  // namespace kiln::runtime::io
