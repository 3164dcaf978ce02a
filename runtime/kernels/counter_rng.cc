#include "runtime/kernels/counter_rng.h"

#include <bit>

namespace kiln::runtime {

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kMul0} * c[0];
    const uint64_t p1 = uint64_t{kMul1} * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return c;
}

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> c, std::array<uint32_t, 2> key) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  uint32_t x0 = c[0] + ks[0], x1 = c[1] + ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = std::rotl(x1, kRotations[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    const uint32_t injection = static_cast<uint32_t>(group + 1);
    x0 += ks[injection % 3];
    x1 += ks[(injection + 1) % 3] + injection;
  }
  return {x0, x1};
}

}  // namespace kiln::runtime
