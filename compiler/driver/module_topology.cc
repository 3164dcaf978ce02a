#include "compiler/driver/module_topology.h"

#include "compiler/spmd/spmd_partitioner.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"

namespace kiln::driver {

Result<ResolvedTopology> ResolveTopology(const hlo::Module& module, CompileOptions& options) {
  const CompileOptions normalized = NormalizedOptions(options);
  const runtime::ChipSpec* chip = runtime::FindChip(normalized.chip);
  if (chip == nullptr) return InvalidArgumentError("unknown chip '" + options.chip + "'");
  ResolvedTopology resolved;
  resolved.devices = spmd::ModuleDeviceCount(module);
  const std::string devices_text = std::to_string(resolved.devices) + " device" + (resolved.devices == 1 ? "" : "s");
  if (!options.topology.empty()) {
    KILN_ASSIGN_OR_RETURN(runtime::Topology given, runtime::ParseTopology(options.topology, *chip));
    if (resolved.devices > 1 && given.chips() != resolved.devices) {
      return InvalidArgumentError("module " + module.name() + " is a program for " + devices_text +
                                  " (its header, shardings or replica groups say so), but the " + given.ToString() +
                                  " slice has " + std::to_string(given.chips()) + " chip" +
                                  (given.chips() == 1 ? "" : "s") + "; leave the topology out to compile it for " +
                                  "its own " + devices_text)
          .WithReason(std::string(kTopologyMismatch));
    }
    options.topology = given.chips() == 1 ? std::string() : given.ToString();
    resolved.source = options.topology.empty() ? TopologySource::kOneChip : TopologySource::kGiven;
    return resolved;
  }
  if (resolved.devices <= 1) return resolved;
  Result<runtime::Topology> slice = runtime::CompactSlice(resolved.devices, *chip);
  if (!slice) {
    return InvalidArgumentError("module " + module.name() + " is a program for " + devices_text + ": " +
                                slice.error().message)
        .WithReason(std::string(kTopologyMismatch));
  }
  options.topology = slice->ToString();
  resolved.source = TopologySource::kModule;
  return resolved;
}

std::string DescribeTopology(const CompileOptions& options, const ResolvedTopology& resolved) {
  switch (resolved.source) {
    case TopologySource::kOneChip:
      return "one chip";
    case TopologySource::kGiven:
      return options.topology + " (given)";
    case TopologySource::kModule:
      return options.topology + " (the module's " + std::to_string(resolved.devices) + " devices)";
  }
  return options.topology;
}

}  // namespace kiln::driver
