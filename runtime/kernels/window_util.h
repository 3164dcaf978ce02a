// Windows over an operand for reduce-window and select-and-scatter: which
// operand element each (output position, window position) pair reads, with
// strides, padding and base/window dilation applied. Positions that fall in
// padding or a dilation hole read nothing.
//
// Plain value; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/index_util.h"

namespace kiln::runtime {

class WindowMap {
 public:
  // Output sizes follow XLA's shape inference for reduce-window. Fails when
  // the window rank differs from the operand's or a size is not positive.
  static Result<WindowMap> Create(const hlo::Window& window, std::span<const int64_t> dims) {
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (static_cast<int64_t>(window.dimensions.size()) != rank) {
      return InvalidArgumentError("window has " + std::to_string(window.dimensions.size()) +
                                  " dimensions for an operand of rank " + std::to_string(rank));
    }
    WindowMap m;
    m.operand_strides_ = RowMajorStrides(dims);
    for (int64_t d = 0; d < rank; ++d) {
      const hlo::WindowDimension& wd = window.dimensions[d];
      if (wd.size < 1 || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1) {
        return InvalidArgumentError("window dimension " + std::to_string(d) +
                                    " has a non-positive size, stride or dilation");
      }
      const int64_t dilated = dims[d] == 0 ? 0 : (dims[d] - 1) * wd.base_dilation + 1;
      const int64_t padded = dilated + wd.padding_low + wd.padding_high;
      const int64_t span = (wd.size - 1) * wd.window_dilation + 1;
      const int64_t out = padded < span ? 0 : (padded - span) / wd.stride + 1;
      m.out_dims_.push_back(out);
      m.window_dims_.push_back(wd.size);
      std::vector<int64_t> pos(out * wd.size, -1);
      for (int64_t o = 0; o < out; ++o) {
        for (int64_t w = 0; w < wd.size; ++w) {
          const int64_t p = o * wd.stride + w * wd.window_dilation - wd.padding_low;
          if (p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= dims[d]) continue;
          pos[o * wd.size + w] = p / wd.base_dilation;
        }
      }
      m.pos_.push_back(std::move(pos));
    }
    return m;
  }

  const std::vector<int64_t>& out_dims() const { return out_dims_; }
  const std::vector<int64_t>& window_dims() const { return window_dims_; }

  // Calls f(linear operand index) for each window position of output
  // position `out` that reads an operand element, in row-major window order.
  template <typename F>
  void ForEachInWindow(std::span<const int64_t> out, std::vector<int64_t>& scratch, F&& f) const {
    const int64_t rank = static_cast<int64_t>(out.size());
    scratch.assign(rank, 0);
    if (Product(window_dims_) == 0) return;
    do {
      int64_t offset = 0;
      bool valid = true;
      for (int64_t d = 0; d < rank && valid; ++d) {
        const int64_t p = pos_[d][out[d] * window_dims_[d] + scratch[d]];
        valid = p >= 0;
        offset += p * operand_strides_[d];
      }
      if (valid) f(offset);
    } while (NextIndex(window_dims_, scratch));
  }

 private:
  std::vector<int64_t> operand_strides_, out_dims_, window_dims_;
  std::vector<std::vector<int64_t>> pos_;
};

}  // namespace kiln::runtime
