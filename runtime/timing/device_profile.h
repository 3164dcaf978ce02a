// The timing simulator's answer: total device time of one execution and a
// profile of every kernel run.
//
// Plain values; copyable; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime::timing {

// What limited a kernel: MXU/vector compute, HBM traffic, fixed costs
// (launch and per-step overhead), or a collective's ICI transfers.
enum class Bound : uint8_t { kCompute, kMemory, kOverhead, kIci };
std::string_view BoundName(Bound bound);  // "compute", "memory", "overhead", "ici"

// A collective's time over the slice's ICI (collective_time.h): bytes over
// links at the chip's per-link bandwidth plus hops at its hop latency.
struct CollectiveTime {
  std::string kind;              // "all-gather", "all-reduce", ...
  int64_t participants = 0;      // devices in the largest group
  int64_t groups = 0;            // groups (or permute pairs) run at once
  // Bytes per participant as the op defines them: all-gather's input shard,
  // all-reduce's, reduce-scatter's and all-to-all's input, the permuted or
  // broadcast operand.
  double payload_bytes = 0;
  double ici_bytes = 0;          // bytes one participant sends over ICI
  double link_bytes = 0;         // bytes over the busiest link, one way
  double transfer_seconds = 0;   // link_bytes at the per-link bandwidth
  double latency_seconds = 0;    // hops in sequence x hop latency
  double seconds = 0;            // transfer + latency
  std::string route;             // "line x(4)", "ring x(16) + line y(8)", ...
  double runs = 1;               // times the kernel runs it (a loop's trips); figures are per run
};

struct KernelProfile {
  std::string name;
  std::string kind;            // the executable's kernel kind ("loop", "output", ...)
  double start_seconds = 0;    // offset from the start of the execution
  double seconds = 0;
  Bound bound = Bound::kOverhead;
  double flops = 0;            // useful (unpadded) FLOPs
  // `flops` at the peak each runs at (KernelWork::PeakSeconds); 0: at the
  // bf16 peak.
  double peak_seconds = 0;
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
  // Collective kernels on a slice: the ICI part of `seconds`. A -done
  // kernel of an async pair has none (its transfer is its -start's).
  std::vector<CollectiveTime> collectives;
  double ici_seconds = 0;
  // A collective kernel: its transfer runs on the ICI links beside the
  // core's kernels that do not wait for it.
  bool on_links = false;
  // A kernel that runs loop or branch bodies step by step: each step's
  // share over one invocation of the kernel, in body order, so a user sees
  // which op of a scanned layer the time goes to. `seconds` is the step's
  // runs alone (before collectives overlap compute), `bytes` its HBM
  // traffic over all runs. Empty for other kernels.
  struct Step {
    std::string name;
    double runs = 0;
    double seconds = 0;
    double bytes = 0;
    Bound bound = Bound::kOverhead;
  };
  std::vector<Step> steps;
};

struct DeviceProfile {
  std::string chip;
  // The slice the program runs on, one copy per chip ("2x4", 8); a single
  // chip is "1x1" (or "1x1x1").
  std::string topology;
  int chips = 1;
  double seconds = 0;  // device time of the whole execution
  double flops = 0;    // one chip's
  double bytes = 0;
  double ideal_bytes = 0;  // the kernels' ideal_bytes summed
  // Hardware FLOP utilization of each chip: the time its FLOPs take at the
  // chip's peak for their types (bf16 FLOP/s; int8 or fp8 where the MXU
  // runs them faster) over `seconds`; 0 when the chip is unknown or no time
  // passed.
  double hfu = 0;
  std::vector<KernelProfile> kernels;  // in execution order
};

// Places `kernels` at `starts` (when given, one per kernel; otherwise end
// to end), takes the device time as the last kernel's end, sums the totals
// and computes the HFU against `chip`'s peak (runtime/chip/chip_spec.h).
// `topology` and `chips` name the slice; empty: one chip.
DeviceProfile AssembleProfile(std::string_view chip, std::vector<KernelProfile> kernels,
                              std::string_view topology = "", int chips = 1, std::span<const double> starts = {});

}  // namespace kiln::runtime::timing
