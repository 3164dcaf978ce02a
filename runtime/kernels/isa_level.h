// x86-64 instruction-set levels for the heavy numeric kernels, and the one
// this process uses.
//
// The kernels that do dense math (isa/gemm_level.cc) are compiled once per
// level; the process picks the best level the CPU supports the first time a
// kernel asks (ActiveIsaLevel), so one binary runs everywhere. The KILN_ISA
// environment variable (baseline|avx2|avx512) may lower that choice for
// testing; it never raises it above what the CPU runs.
//
// Every function here is thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

// Ordered: a higher level runs only on CPUs that run every lower one.
enum class IsaLevel : int {
  kBaseline = 0,  // x86-64 (SSE2), or the target's default elsewhere
  kAvx2 = 1,      // x86-64-v3: AVX2, FMA, BMI2
  kAvx512 = 2,    // x86-64-v4: AVX-512 F/BW/CD/DQ/VL
};
inline constexpr IsaLevel kAllIsaLevels[] = {IsaLevel::kBaseline, IsaLevel::kAvx2, IsaLevel::kAvx512};

// "baseline", "avx2" or "avx512".
std::string_view IsaLevelName(IsaLevel level);

// The level named `name` (as IsaLevelName spells it); an InvalidArgument
// error that lists the names otherwise.
Result<IsaLevel> ParseIsaLevel(std::string_view name);

// The highest level this CPU (and its OS, for the AVX register state) runs.
IsaLevel HostIsaLevel();

// Whether this binary holds kernels compiled for `level`.
bool IsaLevelBuilt(IsaLevel level);

// Whether this process may run `level`: built, and the CPU runs it.
bool IsaLevelRunnable(IsaLevel level);

// The highest level that is both built and runnable.
IsaLevel BestRunnableIsaLevel();

// The level to use given the best runnable level and a KILN_ISA value (none
// when unset): the lower of the two. An unknown KILN_ISA value is an
// InvalidArgument error naming the accepted values.
Result<IsaLevel> ChooseIsaLevel(IsaLevel best_runnable, std::optional<std::string_view> kiln_isa);

// The level the kernels run at: chosen on first use from the CPU and
// KILN_ISA, then fixed for the process (a bad KILN_ISA is reported once on
// stderr and ignored).
IsaLevel ActiveIsaLevel();

}  // namespace kiln::runtime
