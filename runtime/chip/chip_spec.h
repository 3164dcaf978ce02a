// Public figures of the simulated TPU chips (v4, v5e, v5p, v6e, TPU7x).
//
// Sources: Google Cloud TPU system-architecture pages, JAX's tpu_info.py and
// the "How to Scale Your Model" book. Rates are per chip (all TensorCores);
// the timing model and the compiler's cost model are driven by these rates
// rather than by a clock. Immutable static data; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kiln::runtime {

struct ChipSpec {
  std::string_view name;        // "v5e"
  double bf16_flops;            // peak dense bf16 FLOP/s
  double int8_ops;              // peak int8 OP/s (fp8 for TPU7x)
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
};

// The chip named `name` ("v4", "v5e", "v5p", "v6e", "tpu7x"; case-
// insensitive), or nullptr when there is no such chip.
const ChipSpec* FindChip(std::string_view name);

// Every known chip, in the order above.
std::span<const ChipSpec> AllChips();

}  // namespace kiln::runtime
