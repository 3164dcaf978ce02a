// Row-major index arithmetic over array dimensions, shared by the kernels.
//
// Header-only pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace kiln::runtime {

// Row-major strides: strides[last] = 1, strides[i] = strides[i+1] * dims[i+1].
inline std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

inline int64_t Product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Advances `index` to the next row-major position within `dims`; returns
// false (leaving index all zeros) after the last one.
inline bool NextIndex(std::span<const int64_t> dims, std::span<int64_t> index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// Linear row-major offset of `index` given `strides`.
inline int64_t LinearIndex(std::span<const int64_t> strides, std::span<const int64_t> index) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[i];
  return offset;
}

// True when `v` contains `x`.
inline bool Contains(std::span<const int64_t> v, int64_t x) {
  for (int64_t e : v) {
    if (e == x) return true;
  }
  return false;
}

// A row-major walk over `dims` that keeps the linear offset of the current
// position in another buffer, whose stride for dimension i is strides[i]
// (0 for a dimension that buffer does not have).
class StridedWalker {
 public:
  StridedWalker(std::span<const int64_t> dims, std::vector<int64_t> strides)
      : dims_(dims.begin(), dims.end()), strides_(std::move(strides)), index_(dims.size(), 0) {}

  int64_t offset() const { return offset_; }
  const std::vector<int64_t>& index() const { return index_; }

  // Moves to the next position; false after the last one.
  bool Next() {
    for (int64_t i = static_cast<int64_t>(dims_.size()) - 1; i >= 0; --i) {
      if (++index_[i] < dims_[i]) {
        offset_ += strides_[i];
        return true;
      }
      offset_ -= strides_[i] * (dims_[i] - 1);
      index_[i] = 0;
    }
    return false;
  }

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

}  // namespace kiln::runtime
