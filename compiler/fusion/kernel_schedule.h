// Kernel schedule: the order a computation's kernels run in, chosen to keep
// few bytes of HBM live at once (after XLA's memory schedulers).
//
// Two candidate orders are built and the one with the lower peak of live
// kernel outputs is kept (ties: program order):
// - program order: producers first, ties by first root (the order the
//   module was written in);
// - list order: a greedy list schedule that runs, among the ready kernels,
//   the one freeing the most bytes net of what it defines (XLA's
//   ListMemoryScheduler), ties by program order. In a training step this
//   runs each weight gradient as soon as its cotangent exists, instead of
//   keeping every layer's cotangents live until the weight gradients
//   written after them.
// The memory model is buffer assignment's (compiler/buffers): a kernel's
// roots are allocated while its inputs are live and freed after their last
// reader; values the computation returns live to the end; parameters and
// constants are live throughout and left out.
//
// A third order is the tuner's (ScheduleKernelsPreferring): the order it
// asks for, made valid.
//
// Kernels with a side effect (collectives, send/recv, infeed/outfeed, rng,
// custom-calls marked so, and loops, calls or conditionals containing
// them) keep their program order among themselves, so every chip of a
// slice issues its collectives in the same sequence.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "compiler/fusion/fusion_plan.h"
#include "compiler/hlo/computation.h"

namespace kiln::fusion {

enum class ScheduleKind : uint8_t { kProgramOrder, kListOrder, kPreferred };

struct KernelSchedule {
  std::vector<int64_t> order;  // indices into the kernels given
  ScheduleKind kind = ScheduleKind::kProgramOrder;
  int64_t peak_live_bytes = 0;          // of `order`
  int64_t program_order_live_bytes = 0;  // of the program order
};

// Orders `kernels` (roots, instructions and inputs filled in; ids and order
// arbitrary). `root_kernel` maps entry indices to the index in `kernels`
// of the kernel whose root they are, or -1. Fails when the kernels'
// dependencies form a cycle, naming a kernel on it.
Result<KernelSchedule> ScheduleKernels(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                       const std::vector<int64_t>& root_kernel);

// The valid order closest to `preferred` (one rank per kernel; the smaller
// runs first): among the kernels whose producers have run, the one of
// smallest rank runs next, ties by program order. Kernels with ordered
// effects keep their program order among themselves, as above. Fails as
// ScheduleKernels does, or when `preferred` has not one rank per kernel.
Result<KernelSchedule> ScheduleKernelsPreferring(const hlo::Computation& computation,
                                                 const std::vector<Kernel>& kernels,
                                                 const std::vector<int64_t>& root_kernel,
                                                 const std::vector<int64_t>& preferred);

// What any order of a computation's kernels must keep, and what it keeps
// live: per kernel, the kernels it must run after (sorted, distinct: those
// whose roots it reads, directly or through free instructions, its control
// predecessors' kernels and, for a kernel with an ordered effect, the one
// before it in program order), the buffers (kernel roots, by entry index)
// it reads and defines, and each buffer's bytes and whether the
// computation returns it (live to the end). The memory model is
// ScheduleKernels'.
struct KernelGraph {
  std::vector<std::vector<int64_t>> before;
  std::vector<std::vector<int64_t>> reads;
  std::vector<std::vector<int64_t>> defines;
  std::vector<double> bytes;   // entry index -> bytes (roots only)
  std::vector<char> returned;  // entry index -> returned by the computation
};
Result<KernelGraph> KernelDependencies(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                       const std::vector<int64_t>& root_kernel);

}  // namespace kiln::fusion
