// The one step from a module's bytes to its key, shared by every front door
// that names a module by its bytes (compile, explain, tune; the kiln
// commands): parse, verify, resolve the topology a compile takes,
// fingerprint. The bytes are HLO text, StableHLO in MLIR text or MLIR
// bytecode (a VHLO portable artifact), told apart by content
// (compiler/stablehlo/frontend.h); one program has one key whatever its
// dialect.
//
// Errors carry their API code (reasons.h): hlo_parse_error and
// hlo_verify_error (400) for bytes that are not a valid module, with the
// line and column; topology_mismatch (422) for a topology the module does
// not fit (compiler/driver/module_topology.h); fingerprint_error for a
// verified module that has no key (the fingerprinter's own code). Pure;
// thread-safe.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/driver/compile_options.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/shape.h"

namespace kiln::service {

// A module read and verified, with its key.
struct ModuleRead {
  std::unique_ptr<hlo::Module> module;
  hlo::Fingerprint fingerprint;
  double parse_ms = 0;        // parsing and verifying
  double fingerprint_ms = 0;  // resolving the topology and fingerprinting
};

// Parses and verifies `text`; `source` names it in errors ("<hlo>").
// `argument_shapes` (may be empty) refine a module's dynamic dimensions
// (StableHLO's `?`; compiler/stablehlo/argument_refinement.h): shapes that
// contradict the module are 400 invalid_options.
Result<std::unique_ptr<hlo::Module>> ParseVerified(std::string_view text, std::string_view source = "<hlo>",
                                                   const std::vector<hlo::Shape>& argument_shapes = {});

// ParseVerified, then the key of a compile with `options`: the topology is
// resolved in place first (a module for several devices compiles for its
// own slice unless the options name one), so the key carries it.
// `argument_shapes` (may be empty) refine dynamic dimensions; the key is
// the refined module's.
Result<ModuleRead> ReadModule(std::string_view text, driver::CompileOptions& options,
                              std::string_view source = "<hlo>",
                              const std::vector<hlo::Shape>& argument_shapes = {});

// Whether the compiler can take a verified module: a dynamic dimension no
// shapes refined is 400 dynamic_dimension (naming it, and arg_shapes); an
// op with no HLO counterpart kiln compiles is 501 unsupported. A module
// that only is fingerprinted (explain) need not pass.
Status CheckCompilable(const hlo::Module& module);

// The key of a verified module compiled with `options` (topology resolved
// in place, as ReadModule does).
Result<hlo::Fingerprint> FingerprintForCompile(const hlo::Module& module, driver::CompileOptions& options);

}  // namespace kiln::service
