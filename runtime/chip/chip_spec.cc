#include "runtime/chip/chip_spec.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "base/ascii.h"

namespace kiln::runtime {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr int64_t kGB = 1000 * 1000 * 1000;

// The vector unit works on (8,128) tiles of 32-bit lanes; its rate is a small
// fraction of the MXU's (about 1/16 of bf16 peak here), so elementwise
// kernels are HBM-bound, as on real chips.
constexpr double VectorRate(double bf16_flops) { return bf16_flops / 16.0; }

// Scoped VMEM is Mosaic's default per chip: 16 MiB through v5p, 32 MiB from
// v6e on.
//
// ICI, per link and one way: the scaling book's TPU chapter table (first
// edition: v4 and v5e 4.5e10 B/s, v5p and v6e 9e10), the figures its
// sharding chapter times collectives with (its worked all-gather on v5e
// uses 4.5e10 and lands 18% under the measured 680 us). Google Cloud's TPU
// pages give per-chip bidirectional ICI of 400 GB/s (v5e, 4 ports),
// 800 GB/s (v6e, 4 ports) and 1200 GB/s (v5p and TPU7x, 6 ports of a 3D
// torus), i.e. raw links of 5e10 / 1e11 / 1e11 B/s each way; the book's
// figures are about 90% of those. TPU7x takes v5p's figure: the same
// per-chip bandwidth over the same ports.
// Hop latency: "each hop over an ICI link has some intrinsic overhead ...
// typically around 1us" (the book's sharding chapter).
// Pods: v4 16x16x16, v5p 16x20x28 (8960 chips), v5e and v6e 16x16 (the
// book's TPU chapter and Cloud's pages); TPU7x 9216 chips, axes not
// published. Wraparound rules: the book's TPU chapter (see IciWraparound).
// fp8: Cloud's TPU7x page tables peak FP8 per chip as 459 (v5p), 918 (v6e)
// and 4614 TFLOP/s (TPU7x): only TPU7x's MXU runs fp8 faster than bf16; the
// others (and v4, v5e, which it does not list) widen fp8 to bf16.
// HBM capacity: Cloud's TPU pages. Their TPU7x page tables it per chip in
// GiB for v5p (95), v6e (32) and TPU7x (192); v4's page says 32 GiB. v5e's
// page says 16 GB, taken here as written.
constexpr double kHop = 1e-6;
constexpr std::array<ChipSpec, 5> kChips = {{
    {"v4", 2.75e14, 2.75e14, 2.75e14, 32 * kGiB, 1.2e12, 16 * kMiB, 16 * kMiB, 2, 4, 128, 4.5e10,
     VectorRate(2.75e14), 0.35e-6, 2.0e-6, 6, 3, kHop, 4096, 16, IciWraparound::kWholeCubes},
    {"v5e", 1.97e14, 3.94e14, 1.97e14, 16 * kGB, 8.19e11, 128 * kMiB, 16 * kMiB, 1, 4, 128, 4.5e10,
     VectorRate(1.97e14), 0.35e-6, 2.0e-6, 4, 2, kHop, 256, 16, IciWraparound::kFullAxis},
    {"v5p", 4.59e14, 9.18e14, 4.59e14, 95 * kGiB, 2.765e12, 64 * kMiB, 16 * kMiB, 2, 4, 128, 9e10,
     VectorRate(4.59e14), 0.35e-6, 2.0e-6, 6, 3, kHop, 8960, 28, IciWraparound::kWholeCubes},
    {"v6e", 9.18e14, 1.836e15, 9.18e14, 32 * kGiB, 1.638e12, 128 * kMiB, 32 * kMiB, 1, 2, 256, 9e10,
     VectorRate(9.18e14), 0.35e-6, 2.0e-6, 4, 2, kHop, 256, 16, IciWraparound::kFullAxis},
    {"tpu7x", 2.307e15, 4.614e15, 4.614e15, 192 * kGiB, 7.38e12, 64 * kMiB, 32 * kMiB, 2, 2, 256, 9e10,
     VectorRate(2.307e15), 0.35e-6, 2.0e-6, 6, 3, kHop, 9216, 0, IciWraparound::kWholeCubes},
}};

}  // namespace

const ChipSpec* FindChip(std::string_view name) {
  for (const ChipSpec& chip : kChips) {
    if (EqualsIgnoreCase(chip.name, name)) return &chip;
  }
  return nullptr;
}

std::span<const ChipSpec> AllChips() { return kChips; }

std::vector<std::string> ChipNames() {
  std::vector<std::string> names;
  for (const ChipSpec& chip : kChips) names.emplace_back(chip.name);
  return names;
}

std::string ChipNamesText() {
  std::string text;
  for (const ChipSpec& chip : kChips) text += (text.empty() ? "" : ", ") + std::string(chip.name);
  return text;
}

}  // namespace kiln::runtime
