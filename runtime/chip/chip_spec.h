// Public figures of the simulated TPU chips (v4, v5e, v5p, v6e, TPU7x).
//
// Sources: Google Cloud TPU system-architecture pages, JAX's tpu_info.py and
// the "How to Scale Your Model" book (jax-ml/scaling-book). Rates are per
// chip (all TensorCores);
// the timing model and the compiler's cost model are driven by these rates
// rather than by a clock. Immutable static data; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

// When an axis of a slice closes into a ring (wraparound links).
enum class IciWraparound : uint8_t {
  // v5e, v6e: an axis wraps only when it spans the pod's full width
  // (`pod_axis`, 16); smaller slices have none ("a TPU v5e 8x16 will have a
  // wraparound on the longer axis").
  kFullAxis,
  // v4, v5p, TPU7x: slices made of whole 4x4x4 cubes (every axis a multiple
  // of 4) get wraparounds on every axis through the optical switches;
  // smaller ones (2x2x1, 2x4x4) have none.
  kWholeCubes,
};

struct ChipSpec {
  std::string_view name;        // "v5e"
  double bf16_flops;            // peak dense bf16 FLOP/s
  double int8_ops;              // peak int8 OP/s (TPU7x publishes fp8 only: its fp8 figure)
  double fp8_flops;             // peak fp8 FLOP/s: the bf16 rate where the MXU widens fp8
  int64_t hbm_bytes;            // HBM capacity
  double hbm_bytes_per_s;       // HBM bandwidth
  int64_t vmem_bytes;           // VMEM per TensorCore
  int64_t scoped_vmem_bytes;    // default scoped VMEM a kernel may use
  int tensor_cores;             // TensorCores per chip
  int mxus_per_core;            // MXUs per TensorCore
  int mxu_size;                 // MXU is mxu_size x mxu_size
  double ici_bytes_per_s;       // ICI per link, one way
  double vector_flops;          // vector-unit f32 op/s (all cores)
  double step_overhead_s;       // fixed cost per grid step
  double launch_overhead_s;     // fixed cost per kernel launch
  // Inter-chip interconnect. Each chip links to its nearest neighbours:
  // 4 links on the 2D-torus chips, 6 on the 3D-torus ones; a slice's
  // topology names one length per torus axis.
  int ici_links;                // ICI ports per chip
  int torus_dims;               // axes of a slice ("4x8": 2, "2x2x1": 3)
  double ici_hop_latency_s;     // fixed cost of one hop between neighbours
  int64_t pod_chips;            // the largest slice
  int pod_axis;                 // the longest axis of a pod; 0: not published
  IciWraparound wraparound;
};

// The chip named `name` ("v4", "v5e", "v5p", "v6e", "tpu7x"; case-
// insensitive), or nullptr when there is no such chip.
const ChipSpec* FindChip(std::string_view name);

// Every known chip, in the order above.
std::span<const ChipSpec> AllChips();
// Their names in that order ({"v4", "v5e", ...}), and as a message lists
// them ("v4, v5e, v5p, v6e, tpu7x"): what flags accept and errors offer.
std::vector<std::string> ChipNames();
std::string ChipNamesText();

}  // namespace kiln::runtime
