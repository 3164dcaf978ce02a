// The timing simulator's answer: total device time of one execution and a
// profile of every kernel run.
//
// Plain values; copyable; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime::timing {

// What limited a kernel: MXU/vector compute, HBM traffic, or fixed costs
// (launch and per-step overhead).
enum class Bound : uint8_t { kCompute, kMemory, kOverhead };
std::string_view BoundName(Bound bound);  // "compute", "memory", "overhead"

struct KernelProfile {
  std::string name;
  std::string kind;            // the executable's kernel kind ("loop", "output", ...)
  double start_seconds = 0;    // offset from the start of the execution
  double seconds = 0;
  Bound bound = Bound::kOverhead;
  double flops = 0;            // useful (unpadded) FLOPs
  double bytes = 0;            // bytes moved between HBM and VMEM (tile-padded)
  // Every input and output moved once (tile-padded, as laid out): what
  // `bytes` would be with no re-reads. `bytes` may be lower when the kernel
  // reads only a slice of an input.
  double ideal_bytes = 0;
  // Inputs the grid reads more than once (a dot's or convolution's panels,
  // an input taken whole by every block): which (kernel input index) and
  // how many times over.
  struct Reread {
    int input = 0;
    double times = 0;
  };
  std::vector<Reread> rereads;
  double mxu_utilization = 0;  // useful MXU FLOPs / (seconds x peak)
  double grid_steps = 0;
  double compute_seconds = 0;  // summed step compute
  double memory_seconds = 0;   // all transfers at HBM bandwidth
  double overhead_seconds = 0; // launch + step overheads
  std::string tiling;          // "512x1024x1024 (default)", "untiled", ...
};

struct DeviceProfile {
  std::string chip;
  int chips = 1;       // chips the program runs on (one until SPMD programs run on slices)
  double seconds = 0;  // device time of the whole execution
  double flops = 0;
  double bytes = 0;
  double ideal_bytes = 0;  // the kernels' ideal_bytes summed
  // Hardware FLOP utilization: flops / (seconds x the chip's peak bf16
  // FLOP/s x chips); 0 when the chip is unknown or no time passed.
  double hfu = 0;
  std::vector<KernelProfile> kernels;  // in execution order
};

// Lays `kernels` end to end (start_seconds), sums the totals and computes
// the HFU against `chip`'s peak (runtime/chip/chip_spec.h).
DeviceProfile AssembleProfile(std::string_view chip, std::vector<KernelProfile> kernels);

}  // namespace kiln::runtime::timing
