#include "server/service/compile_options.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "compiler/driver/compile_module.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"
#include "server/service/entry_json.h"
#include "server/service/reasons.h"

namespace kiln::service {

using nlohmann::json;

Result<void> SetPlan(driver::CompileOptions& options, std::string_view plan) {
  Result<fusion::PlanKind> kind = driver::ParsePlanKind(plan);
  if (!kind) {
    return InvalidArgumentError("options: plan '" + std::string(plan) + "' is not one of none, heuristic, given")
        .WithReason(std::string(kInvalidOptions));
  }
  options.plan = *kind;
  return {};
}

Result<void> SetChip(driver::CompileOptions& options, std::string_view chip) {
  const runtime::ChipSpec* spec = runtime::FindChip(chip);
  if (spec == nullptr) {
    return InvalidArgumentError("unknown chip '" + std::string(chip) + "' (known: " + runtime::ChipNamesText() + ")")
        .WithReason(std::string(kUnknownChip));
  }
  options.chip = std::string(spec->name);
  return {};
}

Result<void> ApplyJsonOptions(driver::CompileOptions& options, const json& object) {
  if (!object.is_object()) return InvalidArgumentError("options must be an object").WithReason(std::string(kInvalidOptions));
  for (const auto& [field, value] : object.items()) {
    if (field == "plan") {
      if (!value.is_string())
        return InvalidArgumentError("options: plan must be a string").WithReason(std::string(kInvalidOptions));
      if (auto set = SetPlan(options, value.get<std::string>()); !set) return set;
    } else if (field == "topology") {
      if (!value.is_string()) {
        return InvalidArgumentError("options: topology must be a string like \"2x4\"").WithReason(std::string(kInvalidOptions));
      }
      options.topology = value.get<std::string>();
    } else if (field == "scoped_vmem_bytes") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return InvalidArgumentError("options: scoped_vmem_bytes must be a non-negative integer")
            .WithReason(std::string(kInvalidOptions));
      }
      options.scoped_vmem_bytes = value.get<int64_t>();
    } else {
      return InvalidArgumentError("options: unknown field '" + field + "'; expected one of plan, scoped_vmem_bytes, topology")
          .WithReason(std::string(kInvalidOptions));
    }
  }
  return {};
}

Result<void> CheckTopology(driver::CompileOptions& options) {
  if (options.topology.empty() || runtime::FindChip(options.chip) == nullptr) return {};
  Result<std::string> topology = driver::CanonicalTopology(options.topology, options.chip);
  if (!topology) return InvalidArgumentError("options: " + topology.error().message).WithReason(std::string(kInvalidOptions));
  options.topology = std::move(*topology);
  return {};
}

Result<void> CheckScopedVmem(const driver::CompileOptions& options) {
  const runtime::ChipSpec* chip = runtime::FindChip(options.chip);
  if (chip != nullptr && options.scoped_vmem_bytes > chip->vmem_bytes) {
    return InvalidArgumentError("options: scoped_vmem_bytes " + std::to_string(options.scoped_vmem_bytes) +
                                " is larger than " + options.chip + "'s VMEM (" + std::to_string(chip->vmem_bytes) +
                                " bytes)")
        .WithReason(std::string(kInvalidOptions));
  }
  return {};
}

hlo::Hash128 HashCompileRequestBody(std::string_view body, const driver::CompileOptions& options, std::string_view tenant,
                                    std::string_view argument_shapes) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  auto add = [&state](std::string_view part) {
    const uint64_t size = part.size();
    XXH3_128bits_update(&state, &size, sizeof(size));
    XXH3_128bits_update(&state, part.data(), part.size());
  };
  add(body);
  add(options.chip);
  add(driver::CanonicalOptionsText(options));
  add(tenant);
  if (!argument_shapes.empty()) add(argument_shapes);
  XXH128_hash_t hash = XXH3_128bits_digest(&state);
  return hlo::Hash128{hash.high64, hash.low64};
}

Result<driver::CompileOptions> OptionsOfEntry(const cache::EntryMetadata& metadata) {
  driver::CompileOptions options;
  KILN_RETURN_IF_ERROR(SetChip(options, metadata.id.chip));
  const EntryNotes notes = ParseEntryNotes(metadata.options);
  KILN_RETURN_IF_ERROR(ApplyJsonOptions(options, notes.options));
  if (metadata.plan_kind != cache::PlanKind::kTuned && options.plan != fusion::PlanKind::kHeuristic) {
    return InvalidArgumentError("entry " + metadata.id.key.Hex() + " was compiled with plan " +
                                std::string(fusion::PlanKindName(options.plan)) +
                                "; tuning starts from the heuristic plan")
        .WithReason(std::string(kInvalidOptions));
  }
  options.plan = fusion::PlanKind::kHeuristic;
  return driver::NormalizedOptions(options);
}

}  // namespace kiln::service
