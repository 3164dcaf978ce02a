#include "runtime/kernels/kernels.h"

namespace kiln::runtime {

KernelFn FindHeavyKernel(hlo::Opcode opcode) {
  switch (opcode) {
    // Each kernel joins this table when it lands.
    default:
      return nullptr;
  }
}

}  // namespace kiln::runtime
