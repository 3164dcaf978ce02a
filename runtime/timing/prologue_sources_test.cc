// A contraction's prologue (producers computed as it loads its operand
// blocks) is found with the input it reads, and its vector work is paid on
// every load of that input's blocks, not once.
#include "runtime/timing/prologue_sources.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

using testing::ProgramBuilder;

const hlo::Instruction* Named(const hlo::Module& m, std::string_view name) {
  for (const auto& instr : m.entry()->instructions()) {
    if (instr->name() == name) return instr.get();
  }
  ADD_FAILURE() << "no %" << name;
  return nullptr;
}

TEST(PrologueSourcesTest, OnlyProducersThatFeedNothingButOperandsAreInIt) {
  auto m = hlo::ParseModule(R"(
HloModule k
ENTRY e {
  x = f32[64,128] parameter(0)
  s = f32[64,128] parameter(1)
  w = bf16[128,256] parameter(2)
  scaled = f32[64,128] multiply(x, s)
  c = bf16[64,128] convert(scaled)
  shared = f32[64,128] negate(x)
  cs = bf16[64,128] convert(shared)
  d = bf16[64,256] dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = bf16[64,256] dot(cs, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (bf16[64,256], bf16[64,256], f32[64,128]) tuple(d, d2, shared)
})");
  ASSERT_TRUE(m) << m.error().message;
  auto sources = PrologueSources(*(*m)->entry());
  EXPECT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources.count(Named(**m, "scaled")), 1u);
  EXPECT_EQ(sources.count(Named(**m, "c")), 1u);
  EXPECT_EQ(sources.count(Named(**m, "cs")), 1u);
  EXPECT_EQ(sources.count(Named(**m, "shared")), 0u);  // also a result
  EXPECT_EQ(sources.count(Named(**m, "d")), 0u);
  // Parameters 0 and 1 are the same size: the first read wins.
  EXPECT_EQ(sources.at(Named(**m, "c")), 0);
  EXPECT_EQ(sources.at(Named(**m, "cs")), -1);  // reads no parameter through the prologue
}

// The profile of `dot(prologue(x), w)` with `ops` multiplies in its
// prologue.
KernelProfile TimeWithPrologue(int ops) {
  std::string hlo = "HloModule k\nENTRY e {\n  x = f32[4096,4096] parameter(0)\n"
                    "  w = bf16[4096,8192] parameter(1)\n  v0 = f32[4096,4096] negate(x)\n";
  for (int i = 1; i <= ops; ++i) {
    hlo += "  v" + std::to_string(i) + " = f32[4096,4096] multiply(v" + std::to_string(i - 1) + ", x)\n";
  }
  hlo += "  c = bf16[4096,4096] convert(v" + std::to_string(ops) + ")\n";
  hlo += "  ROOT d = bf16[4096,8192] dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  ProgramBuilder b;
  uint32_t x = b.Parameter("f32[4096,4096]");
  uint32_t w = b.Parameter("bf16[4096,8192]");
  uint32_t out = b.Kernel("k", "output", hlo, {x, w}, {"bf16[4096,8192]"})[0];
  auto loaded = b.Load(out);
  EXPECT_TRUE(loaded) << loaded.error().message;
  if (!loaded) return {};
  auto profile = SimulateProgram(**loaded, *FindChip("v5e"));
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? profile->kernels.at(0) : KernelProfile{};
}

TEST(PrologueSourcesTest, PrologueWorkIsPaidOnEveryLoadOfItsInput) {
  const KernelProfile plain = TimeWithPrologue(0);
  const KernelProfile heavy = TimeWithPrologue(24);
  ASSERT_EQ(plain.tiling, heavy.tiling);
  double loads = 1;
  for (const KernelProfile::Reread& r : heavy.rereads) {
    if (r.input == 0) loads = r.times;
  }
  ASSERT_GT(loads, 1.5) << heavy.tiling;  // the grid re-reads x's panels
  const double per_load = 24 * PaddedVectorElements(hlo::Shape(hlo::PrimitiveType::kF32, {4096, 4096})) /
                          FindChip("v5e")->vector_flops;
  EXPECT_NEAR(heavy.compute_seconds - plain.compute_seconds, per_load * loads, 0.01 * per_load * loads)
      << heavy.tiling;
}

}  // namespace
}  // namespace kiln::runtime::timing
