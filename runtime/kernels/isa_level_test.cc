#include "runtime/kernels/isa_level.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "runtime/kernels/gemm_kernels.h"

namespace kiln::runtime {
namespace {

// The feature flags of the first CPU in /proc/cpuinfo (empty elsewhere).
std::set<std::string> CpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(IsaLevelTest, NamesRoundTrip) {
  for (IsaLevel level : kAllIsaLevels) {
    auto parsed = ParseIsaLevel(IsaLevelName(level));
    ASSERT_TRUE(parsed) << parsed.error();
    EXPECT_EQ(*parsed, level);
  }
}

TEST(IsaLevelTest, UnknownNameSaysWhatIsAccepted) {
  auto parsed = ParseIsaLevel("sse9");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("'sse9'"), std::string::npos) << parsed.error();
  EXPECT_NE(parsed.error().message.find("baseline, avx2 or avx512"), std::string::npos);
}

TEST(IsaLevelTest, KilnIsaOnlyLowersTheLevel) {
  auto unset = ChooseIsaLevel(IsaLevel::kAvx2, std::nullopt);
  ASSERT_TRUE(unset);
  EXPECT_EQ(*unset, IsaLevel::kAvx2);
  auto lower = ChooseIsaLevel(IsaLevel::kAvx512, "baseline");
  ASSERT_TRUE(lower);
  EXPECT_EQ(*lower, IsaLevel::kBaseline);
  auto higher = ChooseIsaLevel(IsaLevel::kAvx2, "avx512");
  ASSERT_TRUE(higher);
  EXPECT_EQ(*higher, IsaLevel::kAvx2);
  EXPECT_FALSE(ChooseIsaLevel(IsaLevel::kAvx2, "AVX2"));
}

TEST(IsaLevelTest, BaselineIsAlwaysBuiltAndRunnable) {
  EXPECT_TRUE(IsaLevelBuilt(IsaLevel::kBaseline));
  EXPECT_TRUE(IsaLevelRunnable(IsaLevel::kBaseline));
  ASSERT_NE(GemmKernelsFor(IsaLevel::kBaseline), nullptr);
}

TEST(IsaLevelTest, DispatcherPicksALevelTheCpuRuns) {
  const IsaLevel active = ActiveIsaLevel();
  EXPECT_TRUE(IsaLevelRunnable(active)) << IsaLevelName(active);
  EXPECT_LE(active, HostIsaLevel());
  EXPECT_EQ(ActiveGemmKernels().level, active);
  // Without KILN_ISA (or with a bad one) the best runnable level; with
  // one, the lower of the two.
  const char* env = std::getenv("KILN_ISA");
  auto chosen = ChooseIsaLevel(BestRunnableIsaLevel(), env ? std::optional<std::string_view>(env) : std::nullopt);
  EXPECT_EQ(active, chosen.value_or(BestRunnableIsaLevel())) << "KILN_ISA=" << (env ? env : "(unset)");
}

TEST(IsaLevelTest, HostLevelMatchesTheKernelsCpuFlags) {
  const std::set<std::string> flags = CpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags on this system";
  auto has_all = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (!flags.contains(n)) return false;
    }
    return true;
  };
  const bool v3 = has_all({"avx", "avx2", "fma", "bmi1", "bmi2"});
  const bool v4 = v3 && has_all({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
  if (HostIsaLevel() >= IsaLevel::kAvx2) {
    EXPECT_TRUE(v3);
  }
  if (HostIsaLevel() >= IsaLevel::kAvx512) {
    EXPECT_TRUE(v4);
  }
  // The kernel's flags imply the level, unless the OS does not save the
  // wider registers (then the CPU model reports less, which is safe).
  if (v4) {
    EXPECT_GE(HostIsaLevel(), IsaLevel::kAvx2);
  }
}

TEST(IsaLevelTest, EveryLevelTableNamesItsLevel) {
  for (IsaLevel level : kAllIsaLevels) {
    const GemmKernels* kernels = GemmKernelsFor(level);
    EXPECT_EQ(kernels != nullptr, IsaLevelBuilt(level)) << IsaLevelName(level);
    if (kernels) {
      EXPECT_EQ(kernels->level, level);
    }
  }
}

}  // namespace
}  // namespace kiln::runtime
