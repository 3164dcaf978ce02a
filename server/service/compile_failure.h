// What a client is told when the compiler cannot compile a module, by the
// compiler error's code, so its retry logic can tell the cases apart:
//
//   the compiler's own reason (program_too_large, invalid_collective,
//   topology_mismatch)        kept, with the error's code: 422
//   resource_exhausted        does_not_fit: no chip of the kind can hold
//                             the program (HBM, VMEM): 422
//   unimplemented             unsupported: kiln cannot compile this yet: 501
//   internal, data_loss       internal: kiln's own fault: 500
//   any other                 compile_failed: the program as given cannot
//                             be compiled: 422
//
// The message keeps the compiler's. Pure; thread-safe.
#pragma once

#include "base/status.h"

namespace kiln::service {

Error CompileFailure(const Error& compiler_error);

}  // namespace kiln::service
