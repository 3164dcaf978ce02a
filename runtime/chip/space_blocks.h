// The blocks of a loop or reduce space that a tile search considers: the
// compiler's tiling (compiler/fusion/tiling.h) and the timing simulator's
// own search (runtime/timing/block_plan.h) enumerate the same shapes.
//
// A blockable dimension (kernel_indexing.h) takes any of its candidate
// blocks. A stacked dimension is one no array lays out among its two tiled
// (minor) dimensions: every block holds whole (8,128) tiles of it, so a
// block may stack any number of its indices with no alignment, as Mosaic
// allows for leading block dimensions. Stacks are contiguous: a stacked
// dimension's block exceeds 1 only where every dimension after it (more
// minor in the space) is whole. A broadcast to bf16[8,16,2048,8,128] is
// then cut into 64 blocks of [1,2,2048,8,128] rather than 262,144 of
// [1,1,1,8,128], and the search grows with the stacked dimensions' sum of
// candidates instead of their product.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::runtime {

// Every candidate block of a space with `extents`. `options[s]` lists the
// candidates of dimension s in the order the caller searches them:
// blockable dimensions any of theirs, stacked ones (`stacked[s]`) theirs
// when the stack reaches them, other dimensions 1. Blocks with every
// stacked dimension 1 come first, in odometer order (the last dimension
// fastest); then, for each stacked dimension from the most minor out and
// each of its candidates above 1, the blocks with every later dimension
// whole, the earlier stacked ones 1 and the earlier blockable ones
// combined in odometer order.
std::vector<std::vector<int64_t>> SpaceBlocks(std::span<const int64_t> extents,
                                              std::span<const std::vector<int64_t>> options,
                                              const std::vector<bool>& stacked);

// Whether `blocks` stacks as SpaceBlocks does: a stacked dimension over 1
// only where every later dimension of extent over 1 is whole, and
// dimensions neither blockable nor stacked at 1.
bool StacksContiguously(std::span<const int64_t> extents, const std::vector<bool>& blockable,
                        const std::vector<bool>& stacked, std::span<const int64_t> blocks);

}  // namespace kiln::runtime
