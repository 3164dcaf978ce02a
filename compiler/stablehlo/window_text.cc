#include "compiler/stablehlo/window_text.h"

namespace kiln::stablehlo::convert_internal {
namespace {

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v) {
    if (e != x) return false;
  }
  return true;
}

std::string Joined(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += 'x';
    out += std::to_string(v[i]);
  }
  return out;
}

}  // namespace

void FillWindowDefaults(WindowSpec& w) {
  const size_t n = w.sizes.size();
  if (w.strides.empty()) w.strides.assign(n, 1);
  if (w.pad_low.empty()) w.pad_low.assign(n, 0);
  if (w.pad_high.empty()) w.pad_high.assign(n, 0);
  if (w.lhs_dilation.empty()) w.lhs_dilation.assign(n, 1);
  if (w.rhs_dilation.empty()) w.rhs_dilation.assign(n, 1);
  if (w.reversal.empty()) w.reversal.assign(n, 0);
}

Result<WindowSpec> ReadWindow(const Converter& c, const Operation& op, std::string_view sizes,
                              std::string_view strides, std::string_view lhs_dilation,
                              std::string_view rhs_dilation, std::string_view padding, std::string_view reversal) {
  WindowSpec w;
  const TypeTable& types = c.types();
  auto read = [&](std::string_view name) {
    return name.empty() ? std::vector<int64_t>{} : IntListOf(types, op.FindAttr(name));
  };
  w.sizes = read(sizes);
  w.strides = read(strides);
  w.lhs_dilation = read(lhs_dilation);
  w.rhs_dilation = read(rhs_dilation);
  w.reversal = read(reversal);
  std::vector<int64_t> pads = read(padding);
  if (pads.size() % 2 != 0) return c.OpError(op, "padding is not a list of (low, high) pairs");
  for (size_t i = 0; i < pads.size(); i += 2) {
    w.pad_low.push_back(pads[i]);
    w.pad_high.push_back(pads[i + 1]);
  }
  return w;
}

std::string WindowText(const WindowSpec& in) {
  WindowSpec w = in;
  FillWindowDefaults(w);
  const size_t n = w.sizes.size();
  std::string out = "{size=" + Joined(w.sizes);
  if (w.strides.size() == n && !AllEqual(w.strides, 1)) out += " stride=" + Joined(w.strides);
  if (w.pad_low.size() == n && w.pad_high.size() == n && (!AllEqual(w.pad_low, 0) || !AllEqual(w.pad_high, 0))) {
    out += " pad=";
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out += 'x';
      out += std::to_string(w.pad_low[i]) + "_" + std::to_string(w.pad_high[i]);
    }
  }
  if (w.lhs_dilation.size() == n && !AllEqual(w.lhs_dilation, 1)) out += " lhs_dilate=" + Joined(w.lhs_dilation);
  if (w.rhs_dilation.size() == n && !AllEqual(w.rhs_dilation, 1)) out += " rhs_dilate=" + Joined(w.rhs_dilation);
  if (w.reversal.size() == n && !AllEqual(w.reversal, 0)) out += " rhs_reversal=" + Joined(w.reversal);
  out += "}";
  return out;
}

}  // namespace kiln::stablehlo::convert_internal
