// MLIR-like text of attributes (mlir_module.h): one spelling per value, so
// that values read from text and from bytecode print the same, and
// dictionaries sorted by name, so that attribute order never shows. Used for
// the backend_config of ops kept as opaque custom calls and for messages.
//
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>

#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

void AppendAttrText(const TypeTable& types, const Attr& attr, std::string& out);
// `{a = 1, b = [2]}` of `attrs`, sorted by name.
std::string SortedAttrsText(const TypeTable& types, std::span<const NamedAttr> attrs);
// An HLO string literal: "text" with `"`, `\` and control characters escaped.
std::string QuotedHloString(std::string_view text);

}  // namespace kiln::stablehlo
