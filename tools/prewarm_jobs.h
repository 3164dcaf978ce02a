// The compiles `kiln prewarm` plans: each module found, parsed, verified
// and keyed for every chip asked for, then deduplicated by entry (key and
// chip), so identical modules in several files compile once.
//
// Parse and verify errors are placed in the module's file (file:line:col
// of the file, also for a graph inside a saved graphs file). Pure
// functions; thread-safe (one module per call).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"
#include "tools/module_sources.h"

namespace kiln::tools {

// One entry to make: a module compiled with `options` (its chip) under `key`.
struct CompileJob {
  const ModuleSource* source = nullptr;  // owned by the caller's list of modules
  driver::CompileOptions options;
  hlo::Hash128 key;
};

// A module that cannot become an entry: where (file:line:col, or the
// file) and why.
struct JobFailure {
  std::string where;
  std::string reason;
};

// The options one module compiles with, and its key under them.
struct KeyedOptions {
  driver::CompileOptions options;
  hlo::Hash128 key;
};

// The options and key of `source` for each of `options` (one per chip), in
// order: the key `kiln fingerprint` prints and the server computes. Options
// naming a slice (`topology`) keep it only for modules that run on as many
// devices as the slice has chips (spmd::ModuleDeviceCount); any other
// module compiles for one chip, as a job's helper programs do.
Result<std::vector<KeyedOptions>> KeyModule(const ModuleSource& source,
                                            const std::vector<driver::CompileOptions>& options);

// `source` parsed and verified, errors placed in its file.
Result<std::unique_ptr<hlo::Module>> ParseSource(const ModuleSource& source);

// The failure for an error about `source`: its file:line:col when the
// error has a place, else the origin; the reason without the place.
JobFailure FailureOf(const ModuleSource& source, const Error& error);

}  // namespace kiln::tools
