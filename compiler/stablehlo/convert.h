// Conversion of a StableHLO program (mlir_module.h) to kiln's HLO IR,
// following XLA's StableHLO-to-HLO translation: one computation per
// reachable function (func.call is call), region bodies as called
// computations (values a body captures are passed in, constants copied
// in), tuples for ops of several results, dot_general as dot,
// broadcast_in_dim as broadcast, `mhlo.sharding`, `mhlo.num_partitions`,
// `mhlo.num_replicas` and layouts carried over. CHLO ops are decomposed as
// StableHLO's CHLO legalization does; `check.*` ops and custom calls become
// side-effecting custom calls (check_calls.h) the evaluator runs.
//
// The entry is `main`; a module without one but with a single public
// function takes that function; otherwise (a file of test functions) the
// entry calls every public function in order, taking all their arguments
// and returning all their results, so that the whole module has one key.
//
// Quantized element types are lowered to integer arithmetic (quant_lowering
// .h); dynamic dimensions stay dynamic (`f32[?,4]`) and the dynamic ops
// are the custom calls of dynamic_ops.h, which shape refinement
// (shape_refinement.h) makes static once argument shapes are known. Fails
// with an Error naming the op's line:column in the input when an op, type
// or attribute cannot be converted. The result passes hlo::VerifyModule.
// Thread-safe (reads the MlirModule only).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo {

struct ConvertOptions {
  // The input's name for error messages ("f.mlir").
  std::string filename = "<input>";
  // Concrete shapes for the entry function's arguments (empty: none), for
  // ParseAnyModule's refinement (frontend.h); ConvertToHlo ignores them.
  // An argument's dynamic dimensions take the sizes given here.
  std::vector<hlo::Shape> argument_shapes;
  // Values of scalar integer arguments (JAX's dimension variables), by
  // argument number; refinement reads shapes computed from them.
  std::vector<std::optional<int64_t>> argument_values;
};

Result<std::unique_ptr<hlo::Module>> ConvertToHlo(const MlirModule& module, const ConvertOptions& options = {});

}  // namespace kiln::stablehlo
