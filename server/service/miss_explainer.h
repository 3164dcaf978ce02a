// Would this module hit, and if not, why: the answer of `POST /v1/explain`
// and of `kiln inspect explain`, made in one place so both say the same.
//
// The answer (the ExplainResult schema in schema/openapi.yaml) names the
// nearest entry of the tenant (CacheStore::NearestEntries: any chip, so a module
// cached only for another chip is found), each differing key component
// with both sides readable, and, when the nearest entry kept the HLO text
// it was compiled from, the instructions that differ (hlo::DiffModules):
// a changed constant shows its line and both values. The message says the
// most useful of these in one line: "cached for v5e, not v6e", else a
// parameter's new shape, else the first changed instruction, else the
// first differing component.
//
// Reads the store only; thread-safe as CacheStore is.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cache/cache_store.h"
#include "compiler/driver/compile_module.h"
#include "compiler/hlo/module.h"

namespace kiln::service {

// `module` is verified and its instructions carry their source lines.
// Fails like FingerprintForCompile (module_reader.h: topology_mismatch,
// fingerprint_error) when the module has no key with `options`, or with the
// store's error when it cannot be read.
Result<nlohmann::json> ExplainModule(cache::CacheStore& store, const std::string& tenant, const hlo::Module& module,
                                     driver::CompileOptions options);

}  // namespace kiln::service
