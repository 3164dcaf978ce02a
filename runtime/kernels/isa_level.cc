#include "runtime/kernels/isa_level.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::runtime {

std::string_view IsaLevelName(IsaLevel level) {
  switch (level) {
    case IsaLevel::kBaseline: return "baseline";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
  }
  return "unknown";
}

Result<IsaLevel> ParseIsaLevel(std::string_view name) {
  for (IsaLevel level : kAllIsaLevels) {
    if (IsaLevelName(level) == name) return level;
  }
  return InvalidArgumentError("unknown ISA level '" + std::string(name) +
                              "': expected baseline, avx2 or avx512");
}

IsaLevel HostIsaLevel() {
#if defined(__x86_64__) && defined(__GNUC__)
  // libgcc/compiler-rt's CPU model checks the OS saves the AVX and AVX-512
  // register state (XGETBV) before it reports those features.
  __builtin_cpu_init();
#if defined(__clang__)
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
#else
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const bool v4 = v3 && __builtin_cpu_supports("x86-64-v4");
#endif
  if (v4) return IsaLevel::kAvx512;
  if (v3) return IsaLevel::kAvx2;
#endif
  return IsaLevel::kBaseline;
}

bool IsaLevelBuilt(IsaLevel level) {
  switch (level) {
    case IsaLevel::kBaseline: return true;
#ifdef KILN_ISA_AVX2
    case IsaLevel::kAvx2: return true;
#endif
#ifdef KILN_ISA_AVX512
    case IsaLevel::kAvx512: return true;
#endif
    default: return false;
  }
}

bool IsaLevelRunnable(IsaLevel level) {
  return IsaLevelBuilt(level) && level <= HostIsaLevel();
}

Result<IsaLevel> ChooseIsaLevel(IsaLevel best_runnable, std::optional<std::string_view> kiln_isa) {
  if (!kiln_isa) return best_runnable;
  KILN_ASSIGN_OR_RETURN(IsaLevel requested, ParseIsaLevel(*kiln_isa));
  return std::min(requested, best_runnable);
}

IsaLevel BestRunnableIsaLevel() {
  IsaLevel best = IsaLevel::kBaseline;
  for (IsaLevel level : kAllIsaLevels) {
    if (IsaLevelRunnable(level)) best = level;
  }
  return best;
}

namespace {

IsaLevel ChooseFromEnvironment() {
  const IsaLevel best = BestRunnableIsaLevel();
  const char* env = std::getenv("KILN_ISA");
  Result<IsaLevel> level =
      ChooseIsaLevel(best, env ? std::optional<std::string_view>(env) : std::nullopt);
  if (level) return *level;
  std::fprintf(stderr, "kiln: ignoring KILN_ISA: %s; using %s\n", level.error().ToString().c_str(),
               std::string(IsaLevelName(best)).c_str());
  return best;
}

}  // namespace

IsaLevel ActiveIsaLevel() {
  static const IsaLevel level = ChooseFromEnvironment();
  return level;
}

}  // namespace kiln::runtime
