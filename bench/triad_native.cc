#include "bench/triad_native.h"

namespace kiln::bench {

void NativeTriad(float* a, const float* b, const float* c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

const char* NativeTriadFlags() {
#ifdef KILN_TRIAD_NATIVE
  return "-march=native";
#else
  return "default flags";
#endif
}

}  // namespace kiln::bench
