#include "server/service/module_reader.h"

#include <chrono>
#include <string>

#include "base/clock.h"
#include "compiler/driver/compile_module.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/argument_refinement.h"
#include "compiler/stablehlo/frontend.h"
#include "compiler/stablehlo/refusals.h"
#include "server/service/reasons.h"

namespace kiln::service {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Result<std::unique_ptr<hlo::Module>> ParseVerified(std::string_view text, std::string_view source,
                                                   const std::vector<hlo::Shape>& argument_shapes) {
  Result<std::unique_ptr<hlo::Module>> module = stablehlo::ParseAnyModule(text, source);
  if (!module) return std::unexpected(std::move(module.error()).WithReason(std::string(kHloParseError)));
  if (Status verified = hlo::VerifyModule(**module); !verified) {
    return std::unexpected(std::move(verified.error()).WithReason(std::string(kHloVerifyError)));
  }
  if (!argument_shapes.empty()) {
    Result<stablehlo::DimensionArguments> refined = stablehlo::RefineFromArguments(**module, argument_shapes);
    if (!refined) {
      return std::unexpected(Error(refined.error()).WithContext("arg_shapes").WithReason(std::string(kInvalidOptions)));
    }
  }
  return module;
}

Result<hlo::Fingerprint> FingerprintForCompile(const hlo::Module& module, driver::CompileOptions& options) {
  KILN_RETURN_IF_ERROR(driver::ResolveTopology(module, options));
  Result<hlo::Fingerprint> fingerprint = hlo::FingerprintModule(module, driver::FingerprintOptionsFor(options));
  if (!fingerprint) return std::unexpected(std::move(fingerprint.error()).WithReason(std::string(kFingerprintError)));
  return fingerprint;
}

Status CheckCompilable(const hlo::Module& module) {
  Status compilable = stablehlo::RefuseUncompilable(module);
  if (compilable || compilable.error().code != ErrorCode::kUnimplemented) return compilable;
  return std::unexpected(Error(compilable.error()).WithReason(std::string(kUnsupported)));
}

Result<ModuleRead> ReadModule(std::string_view text, driver::CompileOptions& options, std::string_view source,
                              const std::vector<hlo::Shape>& argument_shapes) {
  ModuleRead read;
  const Clock::time_point parse_start = Clock::now();
  KILN_ASSIGN_OR_RETURN(read.module, ParseVerified(text, source, argument_shapes));
  read.parse_ms = MsSince(parse_start);
  const Clock::time_point fingerprint_start = Clock::now();
  KILN_ASSIGN_OR_RETURN(read.fingerprint, FingerprintForCompile(*read.module, options));
  read.fingerprint_ms = MsSince(fingerprint_start);
  return read;
}

}  // namespace kiln::service
