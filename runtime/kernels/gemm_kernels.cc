#include "runtime/kernels/gemm_kernels.h"

// Each level's table is defined in isa/gemm_level.cc compiled with that
// level's flags into its own namespace (see the comment there).
namespace kiln::runtime {
namespace isa_baseline {
extern const GemmKernels kGemmKernels;
}
#ifdef KILN_ISA_AVX2
namespace isa_avx2 {
extern const GemmKernels kGemmKernels;
}
#endif
#ifdef KILN_ISA_AVX512
namespace isa_avx512 {
extern const GemmKernels kGemmKernels;
}
#endif

const GemmKernels* GemmKernelsFor(IsaLevel level) {
  switch (level) {
    case IsaLevel::kBaseline: return &isa_baseline::kGemmKernels;
#ifdef KILN_ISA_AVX2
    case IsaLevel::kAvx2: return &isa_avx2::kGemmKernels;
#endif
#ifdef KILN_ISA_AVX512
    case IsaLevel::kAvx512: return &isa_avx512::kGemmKernels;
#endif
    default: return nullptr;
  }
}

const GemmKernels& ActiveGemmKernels() {
  // ActiveIsaLevel() only names built, runnable levels.
  static const GemmKernels* const kernels = GemmKernelsFor(ActiveIsaLevel());
  return *kernels;
}

}  // namespace kiln::runtime
