// kiln_cnn_block_bench [--chip v5e] [--batch 96] [--top 3]: MobileNet-v2's
// inverted-residual blocks as torch_xla traces them for inference (f32,
// NCHW: a 1x1 expansion convolution, batch norm as scale and shift, ReLU6,
// a 3x3 depthwise convolution, batch norm, ReLU6, a 1x1 projection, batch
// norm, the residual add), one row per block of the network's stages at a
// 224x224 input, timed without values. The block's input and output are
// given the feature-minor layout kiln gives activations inside a network
// ({1,0,3,2}), so the rows time a block between two others, not the
// transposes at a network's ends. Each row prints the heuristic plan's
// time, the `none` plan's (every op a kernel) in the same run and their
// ratio, HFU, ideal against modelled bytes, the worst non-contraction
// kernel's bytes / ideal and the kernels that take the most time.
//
// Target (issue 15): no non-contraction kernel over 4x its ideal bytes.
// Prints; never fails on the figures, exits non-zero only on an error.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/timed_module.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/profile_output.h"

namespace {

using kiln::runtime::timing::DeviceProfile;
using kiln::runtime::timing::KernelProfile;
using kiln::runtime::timing::Scaled;

struct Block {
  int side;       // input height and width
  int in;         // input channels
  int expansion;  // expanded channels = in x expansion
  int out;        // output channels
  int stride;     // of the depthwise convolution
};

// MobileNet-v2's stages at 224x224, one block of each distinct shape.
constexpr Block kBlocks[] = {
    {112, 16, 6, 24, 2}, {56, 24, 6, 24, 1}, {56, 24, 6, 32, 2},  {28, 32, 6, 32, 1},  {28, 32, 6, 64, 2},
    {14, 64, 6, 64, 1},  {14, 64, 6, 96, 1}, {14, 96, 6, 160, 2}, {7, 160, 6, 160, 1}, {7, 160, 6, 320, 1},
};

std::string BlockName(const Block& b) {
  return std::to_string(b.side) + "x" + std::to_string(b.side) + " " + std::to_string(b.in) + "->" +
         std::to_string(b.in * b.expansion) + "->" + std::to_string(b.out) + (b.stride > 1 ? " s2" : "");
}

// The block's HLO text: activations f32[batch, channels, side, side].
std::string BlockText(const Block& b, int batch) {
  const int mid = b.in * b.expansion, side_out = b.side / b.stride;
  auto act = [&](int c, int side, bool laid_out = false) {
    return "f32[" + std::to_string(batch) + "," + std::to_string(c) + "," + std::to_string(side) + "," +
           std::to_string(side) + "]" + (laid_out ? "{1,0,3,2}" : "");
  };
  auto vec = [](int c) { return "f32[" + std::to_string(c) + "]"; };
  std::string t = "HloModule mobilenet_v2_block\n\nENTRY main {\n";
  t += "  x = " + act(b.in, b.side, true) + " parameter(0)\n";
  t += "  w1 = f32[" + std::to_string(mid) + "," + std::to_string(b.in) + ",1,1] parameter(1)\n";
  t += "  w2 = f32[" + std::to_string(mid) + ",1,3,3] parameter(2)\n";
  t += "  w3 = f32[" + std::to_string(b.out) + "," + std::to_string(mid) + ",1,1] parameter(3)\n";
  int param = 4;
  t += "  zero = f32[] constant(0)\n  six = f32[] constant(6)\n";
  // Batch norm as inference applies it (scale and shift per channel), then
  // ReLU6 when `relu`; returns the name of the last value.
  auto norm = [&](const std::string& name, const std::string& in, int c, int side, bool relu,
                  bool root = false) {
    const std::string s = act(c, side);
    t += "  " + name + ".g = " + vec(c) + " parameter(" + std::to_string(param++) + ")\n";
    t += "  " + name + ".b = " + vec(c) + " parameter(" + std::to_string(param++) + ")\n";
    t += "  " + name + ".gb = " + s + " broadcast(" + name + ".g), dimensions={1}\n";
    t += "  " + name + ".m = " + s + " multiply(" + in + ", " + name + ".gb)\n";
    t += "  " + name + ".bb = " + s + " broadcast(" + name + ".b), dimensions={1}\n";
    if (root) {  // the block's output, laid out as the next block reads it
      t += "  ROOT out = " + act(c, side, true) + " add(" + name + ".m, " + name + ".bb)\n";
      return std::string("out");
    }
    t += "  " + name + ".a = " + s + " add(" + name + ".m, " + name + ".bb)\n";
    if (!relu) return name + ".a";
    t += "  " + name + ".lo = " + s + " broadcast(zero), dimensions={}\n";
    t += "  " + name + ".hi = " + s + " broadcast(six), dimensions={}\n";
    t += "  " + name + ".r = " + s + " clamp(" + name + ".lo, " + name + ".a, " + name + ".hi)\n";
    return name + ".r";
  };
  t += "  e = " + act(mid, b.side) + " convolution(x, w1), window={size=1x1}, dim_labels=bf01_oi01->bf01\n";
  const std::string expanded = norm("bn1", "e", mid, b.side, true);
  const std::string stride =
      b.stride > 1 ? " stride=" + std::to_string(b.stride) + "x" + std::to_string(b.stride) : "";
  t += "  d = " + act(mid, side_out) + " convolution(" + expanded + ", w2), window={size=3x3" + stride +
       " pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=" + std::to_string(mid) + "\n";
  const std::string depthwise = norm("bn2", "d", mid, side_out, true);
  t += "  p = " + act(b.out, side_out) + " convolution(" + depthwise +
       ", w3), window={size=1x1}, dim_labels=bf01_oi01->bf01\n";
  const bool residual = b.stride == 1 && b.in == b.out;
  const std::string projected = norm("bn3", "p", b.out, side_out, false, !residual);
  if (residual) t += "  ROOT out = " + act(b.out, side_out, true) + " add(" + projected + ", x)\n";
  return t + "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MobileNet-v2 blocks on the timing simulator"};
  std::string chip = "v5e";
  int batch = 96, top = 3;
  app.add_option("--chip", chip, "simulated chip")
      ->check(CLI::IsMember(kiln::runtime::ChipNames()));
  app.add_option("--batch", batch, "batch size")->check(CLI::Range(1, 1024));
  app.add_option("--top", top, "kernels listed per block")->check(CLI::Range(0, 20));
  CLI11_PARSE(app, argc, argv);

  std::printf("MobileNet-v2 blocks, f32, batch %d, on %s (heuristic plan vs every op a kernel)\n\n", batch,
              chip.c_str());
  std::printf("%-26s %11s %11s %7s %6s %9s %9s %7s  %-26s  %s\n", "block", "heuristic", "unfused", "gain",
              "HFU", "ideal", "moved", "moved/", "worst non-contraction", "top kernels (share of time)");
  std::vector<std::string> over_4x;
  double log_gain = 0;
  int rows = 0;
  for (const Block& b : kBlocks) {
    const std::string text = BlockText(b, batch), name = BlockName(b);
    auto fused = kiln::bench::TimeModuleText(text, name, chip);
    auto unfused = kiln::bench::TimeModuleText(text, name, chip, kiln::fusion::PlanKind::kNone);
    if (!fused || !unfused) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(),
                   (!fused ? fused.error() : unfused.error()).ToString().c_str());
      return 1;
    }
    const DeviceProfile& p = fused->profile;
    const KernelProfile* worst = kiln::bench::WorstNonContraction(p);
    std::string worst_text = "-";
    if (worst != nullptr) {
      char item[96];
      std::snprintf(item, sizeof(item), "%s %.2fx", worst->name.c_str(), worst->bytes / worst->ideal_bytes);
      worst_text = item;
      if (worst->bytes > 4 * worst->ideal_bytes) over_4x.push_back(name + ": " + worst_text);
    }
    const double gain = unfused->profile.seconds / p.seconds;
    log_gain += std::log(gain);
    ++rows;
    std::printf("%-26s %8.1f us %8.1f us %6.2fx %5.1f%% %9s %9s %6.2fx  %-26.26s  %s\n", name.c_str(),
                p.seconds * 1e6, unfused->profile.seconds * 1e6, gain, 100 * p.hfu,
                Scaled(p.ideal_bytes, "B").c_str(), Scaled(p.bytes, "B").c_str(),
                p.ideal_bytes > 0 ? p.bytes / p.ideal_bytes : 0.0, worst_text.c_str(),
                kiln::bench::TopKernels(p, top).c_str());
  }
  std::printf("\ngeomean gain of the heuristic plan over every op a kernel: %.2fx over %d blocks\n",
              std::exp(log_gain / std::max(rows, 1)), rows);
  std::printf("target: no non-contraction kernel over 4x its ideal bytes: %s\n",
              over_4x.empty() ? "met" : "NOT met");
  for (const std::string& s : over_4x) std::printf("  over 4x: %s\n", s.c_str());
  return 0;
}
