#include "runtime/eval/strided_copy.h"

#include <cstring>

namespace kiln::runtime {
namespace {

template <int kBytes>
void CopyRow(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
             int64_t n) {
  if (src_stride == kBytes && dst_stride == kBytes) {
    std::memcpy(dst, src, static_cast<size_t>(n) * kBytes);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * dst_stride, src + i * src_stride, kBytes);
  }
}

using RowFn = void (*)(const uint8_t*, int64_t, uint8_t*, int64_t, int64_t);

RowFn RowCopier(int64_t element_bytes) {
  switch (element_bytes) {
    case 1: return &CopyRow<1>;
    case 2: return &CopyRow<2>;
    case 4: return &CopyRow<4>;
    case 8: return &CopyRow<8>;
    default: return &CopyRow<16>;
  }
}

}  // namespace

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

void CopyStrided(const StridedBox& box, const uint8_t* src, uint8_t* dst, int64_t element_bytes) {
  const int64_t rank = static_cast<int64_t>(box.dims.size());
  for (int64_t d : box.dims) {
    if (d <= 0) return;
  }
  if (rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(element_bytes));
    return;
  }
  const RowFn row = RowCopier(element_bytes);
  const int64_t inner = box.dims[rank - 1];
  const int64_t inner_src = box.src_strides[rank - 1];
  const int64_t inner_dst = box.dst_strides[rank - 1];
  // Walk the outer dimensions with a multi-index, moving both pointers
  // incrementally.
  std::vector<int64_t> index(static_cast<size_t>(rank - 1), 0);
  while (true) {
    row(src, inner_src, dst, inner_dst, inner);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      src += box.src_strides[d];
      dst += box.dst_strides[d];
      if (++index[d] < box.dims[d]) break;
      src -= box.src_strides[d] * box.dims[d];
      dst -= box.dst_strides[d] * box.dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace kiln::runtime
