// Counter-based random bit generators (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11): Philox4x32-10 and ThreeFry2x32-20,
// the block functions behind XLA's rng-bit-generator.
//
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>

namespace kiln::runtime {

// One Philox4x32 block with 10 rounds: 4 random words from a 128-bit counter
// and a 64-bit key.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// One ThreeFry2x32 block with 20 rounds: 2 random words from a 64-bit counter
// and a 64-bit key.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter,
                                     std::array<uint32_t, 2> key);

}  // namespace kiln::runtime
