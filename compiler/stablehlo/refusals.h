// What a converted StableHLO module may hold that kiln can fingerprint but
// not compile or run, and the refusal that names it: ops kept as opaque
// custom calls (`stablehlo.einsum`, a function whose element type HLO lacks,
// kept as kOpaqueFunctionTarget), and dynamic dimensions (`f32[?,4]`) that
// no concrete shapes refined (convert.h). The kiln command refuses such a
// module before compiling it, naming the op, type or dimension.
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::stablehlo {

inline constexpr std::string_view kOpaqueFunctionTarget = "stablehlo.opaque_function";

// Ok for a module the compiler can take; otherwise a kUnimplemented error
// (an opaque op) or kInvalidArgument (a dynamic dimension, with a hint to
// give concrete input shapes) naming the first such part. HLO text modules
// pass unless they hold the same things.
Status RefuseUncompilable(const hlo::Module& module);

}  // namespace kiln::stablehlo
