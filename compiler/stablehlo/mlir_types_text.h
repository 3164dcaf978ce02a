// MLIR spellings of the types StableHLO uses: element type names ("i32",
// "ui8", "bf16", "f8E4M3FN", "complex<f32>") to and from HLO element types,
// and whole types as MLIR prints them, for messages.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compiler/hlo/primitive_type.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

// The HLO element type of a builtin MLIR scalar type name: "i1" (pred),
// "i8"/"si8" (s8), "ui8" (u8), "f32", "bf16", "f8E5M2", ...; "index" is s64.
// nullopt for other names, complex<...> included.
std::optional<hlo::PrimitiveType> ElementTypeFromMlirName(std::string_view name);

// Whether `name` is a builtin MLIR element type HLO has no counterpart of
// (f6E2M3FN, f6E3M2FN, tf32, f80, f128).
bool IsUnsupportedMlirElementName(std::string_view name);

// The MLIR name of an element type ("i32", "ui8", "complex<f32>").
std::string MlirElementName(hlo::PrimitiveType type);

// Appends the MLIR text of type `id` of `types`.
void AppendTypeText(const TypeTable& types, TypeId id, std::string& out);

}  // namespace kiln::stablehlo
