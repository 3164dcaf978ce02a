#include "runtime/chip/index_regroup.h"

#include <numeric>

#include "runtime/chip/kernel_edges.h"

namespace kiln::runtime {

using hlo::Shape;
using kernel_edges::Product;

DimIndex Resized(const DimIndex& from, int64_t from_extent, int64_t to_extent) {
  if (from_extent == to_extent) return from;
  DimIndex out;
  if (to_extent <= 1) {
    out.known = true;
    return out;
  }
  if (from.parts.size() == 1 && from.parts[0].inner == 1 && from.parts[0].stride == 1 &&
      from.parts[0].halo == 0) {
    out.known = true;
    out.parts = {IndexPart{from.parts[0].space_dim, 1, to_extent}};
  }
  return out;
}

DimIndex ThroughWindow(const DimIndex& from, int64_t from_extent, int64_t to_extent, WindowReach reach,
                       bool to_operand) {
  const int64_t stride = std::max<int64_t>(reach.stride, 1), halo = std::max<int64_t>(reach.halo, 0);
  if (stride == 1 && (halo == 0 || !to_operand)) return Resized(from, from_extent, to_extent);
  DimIndex out;
  if (to_extent <= 1) {
    out.known = true;
    return out;
  }
  const IndexPart& p = from.parts.size() == 1 ? from.parts[0] : IndexPart{};
  if (from.parts.size() != 1 || p.inner != 1 || p.stride != 1 || p.halo != 0) return out;
  out.known = true;
  IndexPart part{p.space_dim, 1, to_extent};
  if (to_operand) {
    part.stride = stride;  // each index of `from` spans `stride` of `to`
    part.halo = halo;
  } else {
    part.inner = stride;  // one index of `to` every `stride` of `from`
  }
  out.parts = {part};
  return out;
}

std::vector<DimIndex> Regroup(const ArrayIndex& from, const Shape& from_shape, const Shape& to_shape,
                              bool physical) {
  std::vector<DimIndex> out(to_shape.rank());
  const std::vector<int64_t> from_order =
      physical ? PhysicalOrder(from_shape) : [&] {
        std::vector<int64_t> o(from_shape.rank());
        std::iota(o.begin(), o.end(), 0);
        return o;
      }();
  const std::vector<int64_t> to_order =
      physical ? PhysicalOrder(to_shape) : [&] {
        std::vector<int64_t> o(to_shape.rank());
        std::iota(o.begin(), o.end(), 0);
        return o;
      }();
  auto from_extent = [&](size_t i) { return std::max<int64_t>(from_shape.dimensions(from_order[i]), 1); };
  auto to_extent = [&](size_t j) { return std::max<int64_t>(to_shape.dimensions(to_order[j]), 1); };
  if (Product(from_shape.dimensions()) != Product(to_shape.dimensions())) return out;
  size_t i = 0, j = 0;
  while (i < from_order.size() || j < to_order.size()) {
    // One group: the shortest runs of dims on each side with equal products.
    size_t i0 = i, j0 = j;
    int64_t pf = 1, pt = 1;
    if (i < from_order.size()) pf *= from_extent(i++);
    if (j < to_order.size()) pt *= to_extent(j++);
    while (pf != pt) {
      if (pf < pt && i < from_order.size()) {
        pf *= from_extent(i++);
      } else if (pt < pf && j < to_order.size()) {
        pt *= to_extent(j++);
      } else {
        return out;
      }
    }
    // Trailing size-1 dimensions join the group that precedes them.
    while (i < from_order.size() && from_extent(i) == 1 && (j >= to_order.size() || to_extent(j) != 1)) ++i;
    while (j < to_order.size() && to_extent(j) == 1 && (i >= from_order.size() || from_extent(i) != 1)) ++j;
    std::vector<IndexPart> parts;
    bool known = true;
    for (size_t a = i0; a < i && known; ++a) {
      const DimIndex& d = from[from_order[a]];
      known = d.known;
      int64_t product = 1;
      for (const IndexPart& p : d.parts) product *= p.extent;
      if (known && product != from_extent(a)) known = false;
      parts.insert(parts.end(), d.parts.begin(), d.parts.end());
    }
    if (!known) continue;
    size_t next = 0;
    for (size_t b = j0; b < j; ++b) {
      int64_t need = to_extent(b);
      DimIndex d;
      d.known = true;
      while (need > 1 && d.known) {
        if (next >= parts.size()) {
          d.known = false;
          break;
        }
        IndexPart& p = parts[next];
        if (p.stride != 1 || p.halo != 0) {  // a window's operand is not regrouped
          d.known = false;
        } else if (p.extent <= need && need % p.extent == 0) {
          d.parts.push_back(p);
          need /= p.extent;
          ++next;
        } else if (p.extent > need && p.extent % need == 0) {
          d.parts.push_back(IndexPart{p.space_dim, p.inner * (p.extent / need), need});
          p.extent /= need;
          need = 1;
        } else {
          d.known = false;
        }
      }
      if (!d.known) break;
      out[to_order[b]] = std::move(d);
    }
  }
  return out;
}

}  // namespace kiln::runtime
