#include "compiler/buffers/address_line.h"

#include <iterator>
#include <limits>

namespace kiln::buffers {

int64_t AddressLine::Rounded(int64_t bytes) {
  if (bytes > std::numeric_limits<int64_t>::max() - kAlignment) return std::numeric_limits<int64_t>::max();
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

void AddressLine::AddFree(int64_t offset, int64_t size) {
  free_by_offset_[offset] = size;
  free_by_size_.insert({size, offset});
}

void AddressLine::RemoveFree(std::map<int64_t, int64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

int64_t AddressLine::Allocate(int64_t bytes) {
  const int64_t size = Rounded(bytes);
  auto fit = free_by_size_.lower_bound({size, std::numeric_limits<int64_t>::min()});
  if (fit != free_by_size_.end()) {
    const auto [block, offset] = *fit;
    RemoveFree(free_by_offset_.find(offset));
    if (block > size) AddFree(offset + size, block - size);
    return offset;
  }
  // Grow the line, from the free block at its end if there is one.
  int64_t offset = end_;
  if (!free_by_offset_.empty()) {
    auto last = std::prev(free_by_offset_.end());
    if (last->first + last->second == end_) {
      offset = last->first;
      RemoveFree(last);
    }
  }
  end_ = offset > std::numeric_limits<int64_t>::max() - size ? std::numeric_limits<int64_t>::max() : offset + size;
  return offset;
}

void AddressLine::Free(int64_t offset, int64_t bytes) {
  int64_t size = Rounded(bytes);
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && offset + size == next->first) {
    size += next->second;
    RemoveFree(next);
  }
  auto after = free_by_offset_.lower_bound(offset);
  if (after != free_by_offset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      RemoveFree(prev);
    }
  }
  AddFree(offset, size);
}

}  // namespace kiln::buffers
