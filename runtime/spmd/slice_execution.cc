#include "runtime/spmd/slice_execution.h"

#include <functional>
#include <optional>
#include <thread>

#include "base/host_cores.h"
#include "runtime/eval/slice_rendezvous.h"

namespace kiln::runtime {
namespace {

// What one device runs: its arguments and options in, its result out.
using DeviceRun = std::function<Result<hlo::Literal>(std::span<const hlo::Literal> args, const EvalOptions& options)>;

Result<std::vector<hlo::Literal>> RunOnSlice(SliceShape slice, std::span<const std::vector<hlo::Literal>> args,
                                             const EvalOptions& options, const DeviceRun& run) {
  const int64_t devices = slice.devices();
  if (slice.replicas < 1 || slice.partitions < 1 || devices > kMaxSliceDevices) {
    return std::unexpected(InvalidArgumentError(
        "a slice of " + SliceShapeText(slice) + " cannot be simulated with values: between 1 and " +
        std::to_string(kMaxSliceDevices) + " devices are supported (time larger slices without values)"));
  }
  if (static_cast<int64_t>(args.size()) != devices) {
    return std::unexpected(InvalidArgumentError("a slice of " + SliceShapeText(slice) + " needs " +
                                                std::to_string(devices) + " argument lists, got " +
                                                std::to_string(args.size())));
  }
  SliceRendezvous rendezvous(devices);
  std::vector<SliceMember> members(devices);
  std::vector<EvalOptions> device_options(devices, options);
  std::vector<int64_t> charged(devices, 0);
  std::vector<std::optional<Result<hlo::Literal>>> results(devices);
  for (int64_t d = 0; d < devices; ++d) {
    members[d] = {&rendezvous, hlo::SliceDevice{slice.replicas, slice.partitions, d / slice.partitions,
                                           d % slice.partitions}};
    device_options[d].slice = &members[d];
    device_options[d].units_charged = &charged[d];
    if (d != 0) device_options[d].control_flow = nullptr;
  }
  auto run_device = [&](int64_t d) {
    // Each chip's program keeps a host core busy (base/host_cores.h).
    HostCores::Lease core = HostCores::Get().Hold();
    results[d] = run(args[d], device_options[d]);
    // A failed device ends like a finished one: members waiting for it at
    // a collective fail at once (kPeerDeviceEnded), and the others run on
    // to their own end. No device is cut short by another's failure, so
    // which devices fail on their own, and so the error reported, does not
    // depend on thread timing.
    rendezvous.Finished(d);
  };
  std::vector<std::thread> threads;
  threads.reserve(devices - 1);
  for (int64_t d = 1; d < devices; ++d) threads.emplace_back(run_device, d);
  run_device(0);
  for (std::thread& t : threads) t.join();

  if (options.units_charged != nullptr) {
    for (int64_t c : charged) *options.units_charged += c;
  }
  // The root cause: the lowest device that failed on its own, not because
  // a peer it waited for had ended.
  std::optional<Error> first;
  for (int64_t d = 0; d < devices; ++d) {
    if (*results[d]) continue;
    Error error = results[d]->error();
    const bool own = error.reason() != kPeerDeviceEnded;
    if (!first || (own && first->reason() == kPeerDeviceEnded)) {
      first = std::move(error).WithContext("device " + std::to_string(d));
      if (own) break;
    }
  }
  if (first) return std::unexpected(*first);
  std::vector<hlo::Literal> out;
  out.reserve(devices);
  for (auto& r : results) out.push_back(std::move(**r));
  return out;
}

}  // namespace

std::string SliceShapeText(SliceShape slice) {
  std::string partitions = std::to_string(slice.partitions) + " partition" + (slice.partitions == 1 ? "" : "s");
  if (slice.replicas == 1) return partitions;
  return std::to_string(slice.replicas) + " replicas x " + partitions;
}

Result<std::vector<hlo::Literal>> EvaluateOnSlice(const hlo::Module& module, SliceShape slice,
                                                  std::span<const std::vector<hlo::Literal>> args,
                                                  const EvalOptions& options) {
  return RunOnSlice(slice, args, options, [&](std::span<const hlo::Literal> a, const EvalOptions& o) {
    return EvaluateModule(module, a, o);
  });
}

Result<std::vector<hlo::Literal>> ExecuteProgramOnSlice(const LoadedProgram& program, SliceShape slice,
                                                        std::span<const std::vector<hlo::Literal>> args,
                                                        const EvalOptions& options,
                                                        std::span<ControlFlowObserver* const> kernel_observers) {
  return RunOnSlice(slice, args, options, [&](std::span<const hlo::Literal> a, const EvalOptions& o) {
    // Observers watch device 0 only (their callbacks are not thread-safe).
    const bool first = o.slice != nullptr && o.slice->device.id() == 0;
    return ExecuteProgram(program, a, o, first ? kernel_observers : std::span<ControlFlowObserver* const>{});
  });
}

}  // namespace kiln::runtime
