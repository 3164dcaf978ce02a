// A slice of TPU chips of one kind, as a topology string names it ("2x4",
// "4x4", "2x2x1", "4x4x8"): its axes, its chip count, which axes close into
// a ring through wraparound links, and where each device sits.
//
// Device ids follow jax.devices() on a TPU slice: coordinates are (x, y[, z])
// in the order the string writes the axes, and the first axis varies
// fastest ("2x4": device 1 is at (1,0), device 2 at (0,1); TpuDevice
// listings show id 2 at coords (0,1,0) on a 2-wide slice).
//
// Wraparound follows ChipSpec::wraparound: on v5e/v6e only an axis of the
// pod's full 16 wraps; on v4/v5p/TPU7x every axis wraps when the slice is
// made of whole 4x4x4 cubes, none otherwise ("How to Scale Your Model",
// TPU chapter: "a 2x2x4 won't have any wraparounds", "a TPU v5e 8x16 will
// have a wraparound on the longer axis"; Cloud's v5p page: "all 4x4x4 and
// larger slices have full 3D torus").
//
// Plain value; copyable; thread-compatible. ParseTopology is pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::runtime {

struct Topology {
  std::vector<int64_t> dims;  // chips along each axis, as written (x first)
  std::vector<bool> wraps;    // axis i closes into a ring

  int64_t chips() const;
  int axes() const { return static_cast<int>(dims.size()); }
  // "2x4", "2x2x1".
  std::string ToString() const;
  // The coordinates of device `device` (0 <= device < chips()).
  std::vector<int64_t> Coordinates(int64_t device) const;
  // The device at `coords` (one per axis, each within its axis).
  int64_t DeviceAt(std::span<const int64_t> coords) const;

  bool operator==(const Topology&) const = default;
};

// One chip of `chip`'s kind: "1x1", or "1x1x1" on the 3D-torus chips.
Topology SingleChip(const ChipSpec& chip);

// Parses `text` ("2x4") for `chip`. Errors quote the text and say why: not
// AxB[xC] positive integers, the wrong number of axes for the chip (v5e and
// v6e are 2D, v4, v5p and TPU7x 3D), an axis longer than the pod's, or more
// chips than a pod holds.
Result<Topology> ParseTopology(std::string_view text, const ChipSpec& chip);

// The most compact slice of `chips` chips of `chip`'s kind: the longest
// axis as short as the pod allows, axes written shortest first ("2x4",
// "2x2x2", "4x4x8"). Fails, saying why, when no slice of that many chips
// fits the pod (e.g. 512 v5e chips).
Result<Topology> CompactSlice(int64_t chips, const ChipSpec& chip);

}  // namespace kiln::runtime
