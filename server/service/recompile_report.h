// Recompile diagnostics: which module names a tenant compiled as several
// programs, and why (the answer of `GET /v1/recompiles` and of
// `kiln inspect recompiles`).
//
// Groups the compile log (CacheStore::CompileRecords) by tenant, module
// name, chip and program structure (hlo/structure_hash.h: modules that only
// share a name, such as main, are apart). For each program compiled as two
// or more keys it reports the
// programs, the compile seconds they cost, the parameter dimensions whose
// sizes changed between them (with every value seen), the constants whose
// values changed (from the HLO text the entries kept, hlo::DiffModules)
// and a suggestion: pad a changing dimension to a few sizes, or pass a
// changing constant as an input; the options that differ (a topology, a
// plan). A program with kStormKeys keys or more whose shapes or constants
// change is a "storm".
//
// Pure over its inputs; `read_source` is called from the calling thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_store.h"

namespace kiln::service {

inline constexpr int kStormKeys = 3;
// Programs per name whose texts are compared (the newest ones).
inline constexpr size_t kComparedPrograms = 8;

// The text an entry kept, or nullopt (evicted, or stored without one).
using SourceReader = std::function<std::optional<std::string>(const cache::EntryId&)>;

// {"modules": [...], "storms": N}; modules with the most programs first
// (then the most compile seconds), each
// {"tenant", "module", "chip", "keys", "compiles", "compile_seconds",
//  "storm", "clients", "programs", "changing_dimensions",
//  "changing_constants", "changing_options", "other_changes", "structure",
//  "suggestion"}.
nlohmann::json RecompileReport(const std::vector<cache::CompileRecord>& records, const SourceReader& read_source);

}  // namespace kiln::service
