// The elementwise benchmark's baseline, compiled for this host's best ISA
// (-march=native where the compiler takes it): a[i] = b[i] + s * c[i].
#pragma once

#include <cstdint>

namespace kiln::bench {

void NativeTriad(float* a, const float* b, const float* c, float s, int64_t n);

// "-march=native" or "default flags", for the report.
const char* NativeTriadFlags();

}  // namespace kiln::bench
