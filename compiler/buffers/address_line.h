// AddressLine: best-fit placement of buffers on one line of HBM addresses,
// for buffer assignment's linear scan.
//
// Allocate takes the smallest free block that fits (ties: the lowest
// address), else grows the line, starting from a free block at its end when
// there is one; Free returns a block and merges it with free neighbours. So
// a freed block is reused by any later buffer that fits it, whatever its
// size, and the line's end (the temporaries area) stays close to the most
// bytes live at once. Sizes are rounded up to kAlignment. Saturates near
// int64's limit instead of overflowing. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace kiln::buffers {

class AddressLine {
 public:
  static constexpr int64_t kAlignment = 512;

  // The offset of a new block of `bytes` (> 0).
  int64_t Allocate(int64_t bytes);
  // Returns the block Allocate gave at `offset` for `bytes`.
  void Free(int64_t offset, int64_t bytes);
  // The end of the line: every block ever placed lies below it.
  int64_t end() const { return end_; }

  static int64_t Rounded(int64_t bytes);

 private:
  void AddFree(int64_t offset, int64_t size);
  void RemoveFree(std::map<int64_t, int64_t>::iterator it);

  std::map<int64_t, int64_t> free_by_offset_;           // offset -> size
  std::set<std::pair<int64_t, int64_t>> free_by_size_;  // (size, offset)
  int64_t end_ = 0;
};

}  // namespace kiln::buffers
