#include "compiler/autotune/same_computation.h"

#include <string>

#include "runtime/format/program.h"

namespace kiln::autotune {

Status SameComputation(std::span<const uint8_t> reference, std::span<const uint8_t> candidate) {
  KILN_ASSIGN_OR_RETURN(runtime::Program a, runtime::ParseProgram(reference));
  KILN_ASSIGN_OR_RETURN(runtime::Program b, runtime::ParseProgram(candidate));
  auto differ = [](const std::string& what) {
    return FailedPreconditionError("the candidate computes something else than the reference: " + what);
  };
  if (a.buffers != b.buffers) return differ("its buffers differ");
  if (a.parameters != b.parameters || a.results != b.results || a.result_shape != b.result_shape) {
    return differ("its parameters or results differ");
  }
  if (a.kernels.size() != b.kernels.size()) {
    return differ(std::to_string(b.kernels.size()) + " kernels, the reference has " +
                  std::to_string(a.kernels.size()));
  }
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    const runtime::ProgramKernel& x = a.kernels[k];
    const runtime::ProgramKernel& y = b.kernels[k];
    if (x.name != y.name || x.hlo != y.hlo || x.inputs != y.inputs || x.outputs != y.outputs) {
      return differ("kernel " + std::to_string(k) + " (" + y.name + ") is not the reference's " + x.name);
    }
  }
  return Ok();
}

}  // namespace kiln::autotune
