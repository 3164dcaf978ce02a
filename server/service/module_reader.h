// The one step from a module's text to its key, shared by every front door
// that names a module by its text (compile, explain, tune): parse, verify,
// resolve the topology a compile takes, fingerprint.
//
// Errors carry their API code (reasons.h): hlo_parse_error and
// hlo_verify_error (400) for text that is not a valid module, with the
// line and column; topology_mismatch (422) for a topology the module does
// not fit (compiler/driver/module_topology.h); fingerprint_error for a
// verified module that has no key (the fingerprinter's own code). Pure;
// thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"

namespace kiln::service {

// A module read and verified, with its key.
struct ModuleRead {
  std::unique_ptr<hlo::Module> module;
  hlo::Fingerprint fingerprint;
  double parse_ms = 0;        // parsing and verifying
  double fingerprint_ms = 0;  // resolving the topology and fingerprinting
};

// Parses and verifies `text`; `source` names it in errors ("<hlo>").
Result<std::unique_ptr<hlo::Module>> ParseVerified(std::string_view text, std::string_view source = "<hlo>");

// ParseVerified, then the key of a compile with `options`: the topology is
// resolved in place first (a module for several devices compiles for its
// own slice unless the options name one), so the key carries it.
Result<ModuleRead> ReadModule(std::string_view text, driver::CompileOptions& options,
                              std::string_view source = "<hlo>");

// The key of a verified module compiled with `options` (topology resolved
// in place, as ReadModule does).
Result<hlo::Fingerprint> FingerprintForCompile(const hlo::Module& module, driver::CompileOptions& options);

}  // namespace kiln::service
