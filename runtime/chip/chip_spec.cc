#include "runtime/chip/chip_spec.h"

#include <algorithm>
#include <array>
#include <cctype>

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
constexpr std::array<ChipSpec, 5> kChips = {{
    {"v4", 2.75e14, 2.75e14, 32 * kGiB, 1.2e12, 16 * kMiB, 16 * kMiB, 2, 4, 128, 4.5e10,
     VectorRate(2.75e14), 0.35e-6, 2.0e-6},
    {"v5e", 1.97e14, 3.94e14, 16 * kGB, 8.19e11, 128 * kMiB, 16 * kMiB, 1, 4, 128, 4.5e10,
     VectorRate(1.97e14), 0.35e-6, 2.0e-6},
    {"v5p", 4.59e14, 9.18e14, 95 * kGiB, 2.765e12, 64 * kMiB, 16 * kMiB, 2, 4, 128, 9e10,
     VectorRate(4.59e14), 0.35e-6, 2.0e-6},
    {"v6e", 9.18e14, 1.836e15, 32 * kGB, 1.638e12, 128 * kMiB, 32 * kMiB, 1, 2, 256, 9e10,
     VectorRate(9.18e14), 0.35e-6, 2.0e-6},
    {"tpu7x", 2.307e15, 4.614e15, 192 * kGiB, 7.38e12, 64 * kMiB, 32 * kMiB, 2, 2, 256, 1.8e11,
     VectorRate(2.307e15), 0.35e-6, 2.0e-6},
}};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const ChipSpec* FindChip(std::string_view name) {
  for (const ChipSpec& chip : kChips) {
    if (EqualsIgnoreCase(chip.name, name)) return &chip;
  }
  return nullptr;
}

std::span<const ChipSpec> AllChips() { return kChips; }

}  // namespace kiln::runtime
