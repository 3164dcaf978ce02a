#include "tools/prewarm_jobs.h"

#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/frontend.h"
#include "compiler/stablehlo/refusals.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"

namespace kiln::tools {
namespace {

// The error placed in the file: lines of a graph inside a saved graphs
// file count from the file's first line.
Error PlacedInFile(const ModuleSource& source, Error error) {
  SourceLocation where = error.where();
  if (where.line > 0) {
    where.file = source.file;
    where.line += source.first_line - 1;
    error.At(std::move(where));
  }
  return error;
}

}  // namespace

Result<std::unique_ptr<hlo::Module>> ParseSource(const ModuleSource& source) {
  Result<std::unique_ptr<hlo::Module>> module = stablehlo::ParseAnyModule(source.text, source.file);
  if (!module) return std::unexpected(PlacedInFile(source, module.error()));
  if (Status verified = hlo::VerifyModule(**module); !verified) {
    return std::unexpected(PlacedInFile(source, verified.error().WithContext("verification failed")));
  }
  // What only a run's inputs could make compilable (dynamic dimensions) or
  // what kiln cannot compile at all fails here, named.
  if (Status compilable = stablehlo::RefuseUncompilable(**module); !compilable) {
    return std::unexpected(PlacedInFile(source, compilable.error()));
  }
  return module;
}

Result<std::vector<KeyedOptions>> KeyModule(const ModuleSource& source,
                                            const std::vector<driver::CompileOptions>& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, ParseSource(source));
  const int64_t devices = spmd::ModuleDeviceCount(*module);
  std::vector<KeyedOptions> keyed;
  for (driver::CompileOptions one : options) {
    // --topology is for the modules of as many devices; the others take
    // their own slice (or one chip), as a server compile of them would.
    if (!one.topology.empty()) {
      const runtime::ChipSpec* chip = runtime::FindChip(one.chip);
      Result<runtime::Topology> slice = runtime::ParseTopology(one.topology, *chip);
      if (!slice || slice->chips() != devices) one.topology.clear();
    }
    Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(*module, one);
    if (!resolved) return std::unexpected(PlacedInFile(source, resolved.error()));
    Result<hlo::Fingerprint> fingerprint = hlo::FingerprintModule(*module, driver::FingerprintOptionsFor(one));
    if (!fingerprint) return std::unexpected(PlacedInFile(source, fingerprint.error()));
    keyed.push_back({std::move(one), fingerprint->key});
  }
  return keyed;
}

JobFailure FailureOf(const ModuleSource& source, const Error& error) {
  const SourceLocation& where = error.where();
  if (where.line > 0) {
    std::string reason = error.context().empty() ? error.message : error.context() + ": " + error.message;
    if (!where.subject.empty()) reason += " (" + where.subject + ")";
    std::string origin = source.origin == source.file ? "" : " (" + source.origin.substr(source.file.size() + 1) + ")";
    return {where.file.empty() ? source.file + ":" + where.PositionText() : where.PositionText(), reason + origin};
  }
  return {source.origin, error.ToString()};
}

}  // namespace kiln::tools
