// Copies an n-dimensional box of elements between two buffers, each
// addressed by its own per-dimension byte strides (which may be zero, to
// broadcast, or negative, to reverse). The data-movement ops (broadcast,
// transpose, slice, reverse, pad, concatenate, dynamic-(update-)slice) are
// all one or two calls of this.
//
// The caller guarantees every addressed byte is inside its buffer. Pure
// function; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::runtime {

struct StridedBox {
  std::vector<int64_t> dims;         // elements per dimension
  std::vector<int64_t> src_strides;  // bytes per step, per dimension
  std::vector<int64_t> dst_strides;  // bytes per step, per dimension
};

void CopyStrided(const StridedBox& box, const uint8_t* src, uint8_t* dst, int64_t element_bytes);

// Row-major element strides of `dims` (the last dimension has stride 1).
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

}  // namespace kiln::runtime
