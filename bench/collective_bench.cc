// kiln_collective_bench: collective kernels timed on a slice by the ICI
// model, next to the figures "How to Scale Your Model" gives (measured on
// v5e, and its worked estimates on a v4 cube), then all-reduce,
// reduce-scatter and all-to-all on common slices. The figures are the
// model's (kernel time with launch, and its ICI part), not host time; the
// within-25% checks of the anchors are unit tests
// (collective_anchors_test.cc, collective_time_test.cc). Exits non-zero only
// on errors.
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "runtime/timing/test_programs.h"
#include "runtime/timing/timing_simulator.h"

namespace {

using kiln::runtime::ChipSpec;
using kiln::runtime::timing::DeviceProfile;
using kiln::runtime::timing::TimingOptions;
using kiln::runtime::timing::testing::ProgramBuilder;

// One collective kernel, `out` = `op`(p) over a parameter of shape
// `operand`, timed on `topology` of `chip` as `kiln run --topology` would;
// prints the kernel's time (launch included) and its ICI part.
bool Row(const char* what, const char* chip_name, const char* topology, const std::string& operand,
         const std::string& out, const std::string& op, double reference_us, const char* reference) {
  const ChipSpec* chip = kiln::runtime::FindChip(chip_name);
  auto slice = kiln::runtime::ParseTopology(topology, *chip);
  if (!slice) {
    std::fprintf(stderr, "%s\n", slice.error().ToString().c_str());
    return false;
  }
  TimingOptions options;
  options.topology = *slice;
  const std::string hlo = "HloModule m\nsum {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                          "  ROOT s = bf16[] add(a, b)\n}\nENTRY e {\n  p = " +
                          operand + " parameter(0)\n  ROOT c = " + out + " " + op + "\n}\n";
  ProgramBuilder b(chip_name);
  const uint32_t x = b.Parameter(operand);
  auto program = b.Load(b.Kernel("c", "single", hlo, {x}, {out})[0]);
  if (!program) {
    std::fprintf(stderr, "%s\n", program.error().ToString().c_str());
    return false;
  }
  auto profile = kiln::runtime::timing::SimulateProgram(**program, *chip, options);
  if (!profile || profile->kernels.size() != 1 || profile->kernels[0].collectives.size() != 1) {
    std::fprintf(stderr, "%s: %s\n", what, profile ? "not one collective kernel" : profile.error().ToString().c_str());
    return false;
  }
  const auto& kernel = profile->kernels[0];
  const double us = kernel.seconds * 1e6;
  std::printf("%-32s %-5s %-6s %-22s %9.1f us %9.1f us", what, chip_name, topology,
              kernel.collectives[0].route.c_str(), us, kernel.ici_seconds * 1e6);
  if (reference_us > 0) {
    std::printf("  %-9s %7.1f us  %+5.1f%%", reference, reference_us, 100 * (us / reference_us - 1));
  }
  std::printf("\n");
  return true;
}

std::string Op(const char* kind, const char* groups, const char* extra = "") {
  return std::string(kind) + "(p), channel_id=1, replica_groups=" + groups + ", use_global_device_ids=true" + extra;
}

std::string Gather(const char* groups) { return Op("all-gather", groups, ", dimensions={0}"); }

}  // namespace

int main() {
  std::printf("%-32s %-5s %-6s %-22s %12s %12s  %s\n", "collective", "chip", "slice", "route", "kernel", "of it ICI",
              "reference");
  bool ok = true;
  // The book's Pop Quiz 2: AllGather_Y on a v5e {X: 8, Y: 4} mesh, measured.
  ok &= Row("all-gather bf16[2048,8192] / 4", "v5e", "4x8", "bf16[512,8192]", "bf16[2048,8192]",
            Gather("[8,4]<=[32]"), 680, "measured");
  ok &= Row("all-gather bf16[256,256] / 4", "v5e", "4x8", "bf16[64,256]", "bf16[256,256]", Gather("[8,4]<=[32]"), 8,
            "measured");
  // Its sharding chapter's Question 2 on a v4 4x4x4 (estimates, not measured).
  ok &= Row("all-gather_X [B_X, D_Y]", "v4", "4x4x4", "bf16[256,1024]", "bf16[1024,1024]", Gather("[16,4]<=[64]"),
            23, "book est.");
  ok &= Row("all-gather_XY [B_X, D_Y]", "v4", "4x4x4", "bf16[256,1024]", "bf16[4096,1024]", Gather("[4,16]<=[64]"),
            46, "book est.");
  // The other collectives on 32 MiB per chip over common slices.
  const char* kFull = "bf16[2048,8192]";
  for (const auto& [chip, topology, groups, members] :
       {std::tuple{"v5e", "16x16", "[16,16]<=[256]", 16}, std::tuple{"v5e", "4x4", "[4,4]<=[16]", 4},
        std::tuple{"v5p", "4x4x4", "[16,4]<=[64]", 4}, std::tuple{"v5p", "2x2x1", "[1,4]<=[4]", 4},
        std::tuple{"v6e", "16x16", "[1,256]<=[256]", 256}}) {
    const std::string shard = "bf16[" + std::to_string(2048 / members) + ",8192]";
    ok &= Row("all-reduce bf16[2048,8192]", chip, topology, kFull, kFull, Op("all-reduce", groups, ", to_apply=sum"),
              0, "");
    ok &= Row("reduce-scatter bf16[2048,8192]", chip, topology, kFull, shard,
              Op("reduce-scatter", groups, ", dimensions={0}, to_apply=sum"), 0, "");
    ok &= Row("all-to-all bf16[2048,8192]", chip, topology, kFull, kFull, Op("all-to-all", groups, ", dimensions={0}"),
              0, "");
  }
  return ok ? 0 : 1;
}
