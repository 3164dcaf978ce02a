// The bytes a collective puts on each ICI link of a slice, one way.
//
// Every chip has one link per direction per torus axis (its nearest
// neighbours); an axis without wraparound has no link past its ends. A
// transfer goes axis by axis, the shorter way round a wrapped axis, half
// each way when both are equally short; a transfer between chips that
// differ on several axes is split evenly over the rotations of the axis
// order (x-then-y and y-then-x), which is what lets a multi-axis collective
// use every axis's links at once.
//
// Borrows the topology (which must outlive it) and owns its counters; not
// thread-safe. Cost is linear in the hops routed.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/chip/topology.h"

namespace kiln::runtime::timing {

class LinkLoads {
 public:
  explicit LinkLoads(const Topology& topology);

  // Adds `bytes` on the route from device `from` to device `to`; returns the
  // number of links the longest path takes (0 when from == to).
  int64_t Route(int64_t from, int64_t to, double bytes);

  // The bytes on the busiest link.
  double Max() const;

 private:
  int64_t RouteOrder(std::vector<int64_t> at, const std::vector<int64_t>& to, const std::vector<int>& order,
                     size_t step, double bytes);
  void Add(const std::vector<int64_t>& at, int axis, int direction, double bytes);

  const Topology& topology_;
  std::vector<double> bytes_;  // [device][axis][direction]
};

}  // namespace kiln::runtime::timing
