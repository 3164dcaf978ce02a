// Compiling a per-device program for a slice: the topology is part of the
// key and the executable, the program must fit one chip, and the
// executable runs on every chip of the slice with values crossing between
// them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/driver/compile_module.h"
#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/program/loaded_program.h"
#include "runtime/spmd/slice_execution.h"

namespace kiln::driver {
namespace {

// Each device adds its partition id to its argument, then the slice sums
// the results and gathers the sums.
constexpr char kPerDevice[] = R"(HloModule per_device, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] partition-id()
  f = f32[] convert(id)
  b = f32[2] broadcast(f), dimensions={}
  shifted = f32[2] add(p, b)
  sum = f32[2] all-reduce(shifted), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
  ROOT g = f32[4] all-gather(shifted), channel_id=2, replica_groups=[2,2]<=[4], dimensions={0}, use_global_device_ids=true
})";

Result<CompileOutput> Compile(const std::string& text, const std::string& topology) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, hlo::ParseModule(text));
  CompileOptions options;
  options.topology = topology;
  return CompileModule(*module, options);
}

TEST(SlicedCompileTest, TheTopologyIsPartOfTheKeyAndTheExecutable) {
  auto one = Compile(kPerDevice, "");
  auto four = Compile(kPerDevice, "2x2");
  auto other = Compile(kPerDevice, "1x4");
  ASSERT_TRUE(one && four && other) << (!four ? four.error().ToString() : "");
  EXPECT_NE(one->fingerprint.key, four->fingerprint.key);
  EXPECT_NE(four->fingerprint.key, other->fingerprint.key);
  EXPECT_EQ(four->program.topology, "2x2");
  EXPECT_EQ(one->program.topology, "");
  EXPECT_NE(four->program.options.find("\"topology\":\"2x2\""), std::string::npos) << four->program.options;
  auto loaded = runtime::LoadedProgram::FromBytes(four->executable);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ((*loaded)->program().topology, "2x2");
}

TEST(SlicedCompileTest, TheExecutableRunsOnEveryChipOfTheSlice) {
  auto compiled = Compile(kPerDevice, "2x2");
  ASSERT_TRUE(compiled) << compiled.error().ToString();
  auto loaded = runtime::LoadedProgram::FromBytes(compiled->executable);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  std::vector<std::vector<hlo::Literal>> args;
  for (int d = 0; d < 4; ++d) {
    auto lit = hlo::ParseLiteral("f32[2] {" + std::to_string(10 * d) + ", 0}");
    ASSERT_TRUE(lit);
    args.push_back({std::move(*lit)});
  }
  auto results = runtime::ExecuteProgramOnSlice(**loaded, {1, 4}, args);
  ASSERT_TRUE(results) << results.error().ToString();
  // Device d holds {10d + d, d}; pairs {0,1} and {2,3} gather theirs.
  EXPECT_EQ((*results)[0].ToString(), "f32[4] {0, 0, 11, 1}");
  EXPECT_EQ((*results)[3].ToString(), "f32[4] {22, 2, 33, 3}");
}

TEST(SlicedCompileTest, APerDeviceProgramMustFitOneChip) {
  // 4 x 6 GB of f32 parameters: too big for one v5e chip (16 GB) even
  // though the slice holds 64 GB.
  constexpr char kBig[] = R"(HloModule big
ENTRY e {
  a = f32[1500000000] parameter(0)
  b = f32[1500000000] parameter(1)
  c = f32[1500000000] parameter(2)
  d = f32[1500000000] parameter(3)
  ab = f32[1500000000] add(a, b)
  cd = f32[1500000000] add(c, d)
  ROOT r = f32[1500000000] add(ab, cd)
})";
  auto compiled = Compile(kBig, "2x2");
  ASSERT_FALSE(compiled);
  const std::string error = compiled.error().ToString();
  EXPECT_NE(error.find("; chip v5e (one chip of the 2x2 slice) has 14.9 GiB"), std::string::npos) << error;
  // It names a chip kind whose HBM holds the program.
  const size_t at = error.find("; it fits on ");
  ASSERT_NE(at, std::string::npos) << error;
  const size_t name_start = at + std::string("; it fits on ").size();
  const std::string name = error.substr(name_start, error.find(" (", name_start) - name_start);
  const runtime::ChipSpec* roomier = runtime::FindChip(name);
  ASSERT_NE(roomier, nullptr) << error;
  EXPECT_GT(roomier->hbm_bytes, runtime::FindChip("v5e")->hbm_bytes) << error;
}

}  // namespace
}  // namespace kiln::driver
