// End-to-end tests of `kiln run --topology`: a program run on a slice has
// its collectives timed over ICI and reported as kernels; a module for
// several devices runs on its own slice without the flag; the flag is
// checked against the chip and the module's device count.
// Drives the real binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tests/kiln_run_fixture.h"

namespace kiln {
namespace {

using testing::ExpectError;
using testing::KilnRunTest;
using testing::RunResult;

// AllGather over 4 of the 32 chips (the scaling book's v5e example).
constexpr const char* kGatherModule = R"(HloModule gather, num_partitions=32
ENTRY main {
  p = bf16[512,8192] parameter(0)
  ROOT g = bf16[2048,8192] all-gather(p), channel_id=1, replica_groups=[8,4]<=[32], dimensions={0}, use_global_device_ids=true
}
)";

std::string CorpusPath(const std::string& relative) { return std::string(KILN_CORPUS_DIR) + "/hlo/" + relative; }

// The numbers of the f32[16,4] result literal --print-literals printed.
std::vector<double> ResultNumbers(const std::string& text) {
  std::vector<double> out;
  const size_t start = text.find("f32[16,4] {");
  if (start == std::string::npos) return out;
  const size_t end = text.find('\n', start);
  std::string literal = text.substr(start + 10, end - start - 10);
  for (char& c : literal) c = (c == '{' || c == '}' || c == ',') ? ' ' : c;
  std::istringstream in(literal);
  double v;
  while (in >> v) out.push_back(v);
  return out;
}

// The two runs' results agree to the corpus tolerance, number by number.
void ExpectSameValues(const std::string& sliced_out, const std::string& whole_out) {
  std::vector<double> a = ResultNumbers(sliced_out), b = ResultNumbers(whole_out);
  ASSERT_EQ(a.size(), 64u) << sliced_out;
  ASSERT_EQ(b.size(), 64u) << whole_out;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(b[i]))) << i;
}

nlohmann::json Json(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << r.out;
  return json;
}

TEST_F(KilnRunTest, TopologyTimesCollectivesOverIci) {
  const std::string module = Write("gather.hlo", kGatherModule);
  nlohmann::json slice = Json(Run(module + " --timing-only --json --topology 4x8"));
  EXPECT_EQ(slice["topology"], "4x8");
  EXPECT_EQ(slice["chips"], 32);
  ASSERT_EQ(slice["kernels"].size(), 1u);
  const nlohmann::json& kernel = slice["kernels"][0];
  EXPECT_EQ(kernel["bound"], "ici");
  EXPECT_EQ(kernel["collectives"][0]["kind"], "all-gather");
  EXPECT_EQ(kernel["collectives"][0]["participants"], 4);
  EXPECT_EQ(kernel["collectives"][0]["route"], "line x(4)");
  EXPECT_NEAR(kernel["us"].get<double>(), 680, 0.25 * 680);

  // Without --topology the module runs on its own 32 devices (it used to
  // run on one chip, timing its all-gather as a local copy).
  nlohmann::json own = Json(Run(module + " --timing-only --json"));
  EXPECT_EQ(own["topology"], "4x8");
  EXPECT_EQ(own["chips"], 32);
  EXPECT_EQ(own["runs_on"], "4x8 (the module's 32 devices)");
  EXPECT_TRUE(own["kernels"][0].contains("collectives"));
  EXPECT_EQ(own["device_us"], slice["device_us"]);
  EXPECT_EQ(own["key"], slice["key"]) << "the default is the slice the flag names";

  RunResult text = Run(module + " --timing-only --topology 4x8");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ici: all-gather line x(4)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("device time on v5e 4x8 (each of 32 chips)"), std::string::npos) << text.out;
}

TEST_F(KilnRunTest, TopologyIsCheckedAgainstTheChipAndTheModule) {
  const std::string module = Write("gather.hlo", kGatherModule);
  ExpectError(Run(module + " --timing-only --topology 3x"), "--topology: bad topology '3x' for v5e");
  ExpectError(Run(module + " --timing-only --topology 2x2x8"), "v5e slices are 2D");
  ExpectError(Run(module + " --timing-only --chip v5p --topology 4x8"), "v5p slices are 3D");
  ExpectError(Run(module + " --timing-only --topology 32x32"), "at most 16 wide");
  ExpectError(Run(module + " --timing-only --topology 2x4"),
              "--topology: module gather is a program for 32 devices (its header, shardings or replica groups say "
              "so), but the 2x4 slice has 8 chips");
  RunResult direct = Run(module + " --direct --topology 4x8");
  EXPECT_NE(direct.exit_code, 0);
}

// A module traced with global shapes and shardings (one of XLA's e2e
// tests): --topology partitions it, runs the per-chip program on every chip
// with values crossing between them, and prints the global result, which
// equals evaluating the module whole.
TEST_F(KilnRunTest, TopologyPartitionsAShardedModuleAndGivesTheWholeModulesValues) {
  const std::string module = CorpusPath("xla-tests/collective_ops_e2e_test__DotContractingNonContractingAndContractingNonContracting.hlo");
  RunResult sliced = Run(module + " --topology 2x2 --random-inputs 7 --print-literals");
  RunResult whole = Run(module + " --direct --random-inputs 7 --print-literals");
  ASSERT_EQ(sliced.exit_code, 0) << sliced.err;
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(sliced.out.find("v5e 2x2 (each of 4 chips)"), std::string::npos) << sliced.out;
  ExpectSameValues(sliced.out, whole.out);
}

TEST_F(KilnRunTest, TopologyRefusesAShardedModuleForAnotherDeviceCount) {
  const std::string module = CorpusPath("xla-tests/collective_ops_e2e_test__DotContractingAndContracting.hlo");
  RunResult r = Run(module + " --topology 2x2 --random-inputs 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is a program for 2 devices (its header, shardings or replica groups say so), but the 2x2 "
                       "slice has 4 chips"),
            std::string::npos)
      << r.err;
  // Left to itself, it runs on its own 2 chips.
  RunResult own = Run(module + " --random-inputs 1");
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("(the module's 2 devices)"), std::string::npos) << own.out;
}

// `kiln compile --topology` writes the slice's program; `kiln run` runs the
// file on that slice without being told, and refuses another.
TEST_F(KilnRunTest, CompileTopologyWritesAProgramThatRunsOnItsSlice) {
  const std::string module = CorpusPath("xla-tests/collective_ops_e2e_test__DotContractingNonContractingAndContractingNonContracting.hlo");
  const std::string kexe = ::testing::TempDir() + "/kiln-slice-" + std::to_string(::getpid()) + ".kexe";
  nlohmann::json compiled = Json(Kiln("compile " + module + " --topology 2x2 --json --out " + kexe));
  EXPECT_EQ(compiled["topology"], "2x2") << compiled.dump();
  // Without --topology: the module's own 4 devices, on the most compact
  // v5e slice of 4, the same program and key.
  nlohmann::json own = Json(Kiln("compile " + module + " --json"));
  EXPECT_EQ(own["topology"], "2x2");
  EXPECT_EQ(own["devices"], 4);
  EXPECT_EQ(compiled["key"], own["key"]);
  RunResult described = Kiln("compile " + module);
  EXPECT_NE(described.out.find("topology       2x2 (the module's 4 devices): the program of each chip"),
            std::string::npos)
      << described.out;

  RunResult sliced = Run(kexe + " --random-inputs 7 --print-literals");
  RunResult whole = Run(module + " --direct --random-inputs 7 --print-literals");
  ASSERT_EQ(sliced.exit_code, 0) << sliced.err;
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(sliced.out.find("v5e 2x2 (each of 4 chips)"), std::string::npos) << sliced.out;
  ExpectSameValues(sliced.out, whole.out);

  ExpectError(Run(kexe + " --random-inputs 7 --topology 1x4"), "was compiled for the 2x2 slice, not 1x4");
  RunResult refused = Kiln("compile " + module + " --topology 3x3");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--topology: module module is a program for 4 devices"), std::string::npos) << refused.err;
  std::remove(kexe.c_str());
}

}  // namespace
}  // namespace kiln
