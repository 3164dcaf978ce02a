#include "runtime/chip/space_blocks.h"

#include <algorithm>

namespace kiln::runtime {
namespace {

// Appends every combination of the candidates of dimensions `free`, the
// last fastest, the other dimensions as `block` has them.
void Odometer(std::span<const std::vector<int64_t>> options, const std::vector<size_t>& free,
              std::vector<int64_t> block, std::vector<std::vector<int64_t>>& out) {
  std::vector<size_t> at(free.size(), 0);
  while (true) {
    for (size_t i = 0; i < free.size(); ++i) block[free[i]] = options[free[i]][at[i]];
    out.push_back(block);
    size_t i = free.size();
    while (i > 0 && ++at[i - 1] == options[free[i - 1]].size()) at[--i] = 0;
    if (i == 0) return;
  }
}

}  // namespace

std::vector<std::vector<int64_t>> SpaceBlocks(std::span<const int64_t> extents,
                                              std::span<const std::vector<int64_t>> options,
                                              const std::vector<bool>& stacked) {
  const size_t rank = extents.size();
  std::vector<std::vector<int64_t>> out;
  // Dimensions before `end` that take their candidates (not stacked).
  auto free_before = [&](size_t end) {
    std::vector<size_t> free;
    for (size_t s = 0; s < end; ++s) {
      if (!stacked[s] && !options[s].empty()) free.push_back(s);
    }
    return free;
  };
  Odometer(options, free_before(rank), std::vector<int64_t>(rank, 1), out);
  for (size_t s = rank; s-- > 0;) {
    if (!stacked[s]) continue;
    for (int64_t b : options[s]) {
      if (b <= 1) continue;
      std::vector<int64_t> stack(rank, 1);
      stack[s] = b;
      for (size_t t = s + 1; t < rank; ++t) stack[t] = std::max<int64_t>(extents[t], 1);
      Odometer(options, free_before(s), std::move(stack), out);
    }
  }
  return out;
}

bool StacksContiguously(std::span<const int64_t> extents, const std::vector<bool>& blockable,
                        const std::vector<bool>& stacked, std::span<const int64_t> blocks) {
  const size_t rank = extents.size();
  bool whole_after = true;  // every dimension after s is whole
  for (size_t s = rank; s-- > 0;) {
    const int64_t extent = std::max<int64_t>(extents[s], 1);
    if (blocks[s] > 1 && !blockable[s]) {
      if (!stacked[s] || !whole_after) return false;
    }
    if (extent > 1 && blocks[s] < extent) whole_after = false;
  }
  return true;
}

}  // namespace kiln::runtime
