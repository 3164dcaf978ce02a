// Running one per-device program on every device of a simulated slice.
//
// A slice holds replica_count x partition_count devices (global id =
// replica * partition_count + partition). Each device runs the same program
// on a thread of its own, with its own arguments; their collectives meet in
// one SliceRendezvous (runtime/eval/slice_rendezvous.h), so values really
// cross between devices. The first device to fail stops the others, and its
// error, naming the device, is the call's; no device is left waiting.
//
// Arguments are borrowed for the call; results are the caller's. Options
// apply to every device (step budget per device; units_charged receives the
// sum; control_flow observes device 0 only). Each call is independent:
// concurrent calls are safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "runtime/eval/evaluator.h"
#include "runtime/program/loaded_program.h"

namespace kiln::runtime {

struct SliceShape {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t devices() const { return replicas * partitions; }
};

// Most devices one call simulates with values (one thread each).
inline constexpr int64_t kMaxSliceDevices = 256;

// "2 partitions" / "2 replicas x 4 partitions".
std::string SliceShapeText(SliceShape slice);

// Evaluates the module's entry computation on every device: args[d] are
// device d's parameters; returns device d's result at [d].
Result<std::vector<hlo::Literal>> EvaluateOnSlice(const hlo::Module& module, SliceShape slice,
                                                  std::span<const std::vector<hlo::Literal>> args,
                                                  const EvalOptions& options = {});

// ExecuteProgram on every device; `kernel_observers` as ExecuteProgram's,
// for device 0.
Result<std::vector<hlo::Literal>> ExecuteProgramOnSlice(
    const LoadedProgram& program, SliceShape slice, std::span<const std::vector<hlo::Literal>> args,
    const EvalOptions& options = {}, std::span<ControlFlowObserver* const> kernel_observers = {});

}  // namespace kiln::runtime
