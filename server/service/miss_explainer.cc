#include "server/service/miss_explainer.h"

#include <algorithm>

#include "cache/components.h"
#include "compiler/driver/module_topology.h"
#include "compiler/hlo/module_diff.h"
#include "compiler/stablehlo/frontend.h"
#include "server/service/entry_json.h"
#include "server/service/module_reader.h"

namespace kiln::service {
namespace {

using nlohmann::json;

// How many entries sharing as many key components are compared
// instruction by instruction (each costs a parse of its text).
constexpr size_t kTiedCandidates = 4;

// The readable side of a component, or null.
json ComponentText(const std::string& name, const std::vector<std::string>& parameters, const std::string& chip,
                   const json& options) {
  constexpr std::string_view kParameter = "parameter ";
  if (name.starts_with(kParameter)) {
    size_t index = std::strtoul(name.c_str() + kParameter.size(), nullptr, 10);
    if (index < parameters.size()) return parameters[index];
    return nullptr;
  }
  if (name == "target") return chip;
  if (name == "options") return options.dump();
  return nullptr;
}

bool HasComponent(const std::vector<cache::KeyComponent>& components, const std::string& name) {
  return std::any_of(components.begin(), components.end(),
                     [&](const cache::KeyComponent& component) { return component.name == name; });
}

json Difference(const std::string& name, json request, json nearest) {
  std::string message;
  if (request.is_null() && nearest.is_null()) {
    message = name + " differs";
  } else if (request.is_null()) {
    message = "the request has no " + name + "; the nearest entry's is " + nearest.get<std::string>();
  } else if (nearest.is_null()) {
    message = name + " is " + request.get<std::string>() + "; the nearest entry has none";
  } else {
    message = name + " is " + request.get<std::string>() + ", nearest entry has " + nearest.get<std::string>();
  }
  return json{{"component", name}, {"request", std::move(request)}, {"nearest", std::move(nearest)}, {"message", message}};
}

json ChangeJson(const hlo::InstructionChange& change) {
  json out = {{"kind", hlo::InstructionChangeKindName(change.kind)},
              {"computation", change.computation},
              {"instruction", change.instruction},
              {"value_only", change.value_only}};
  out["line"] = change.line > 0 ? json(change.line) : json(nullptr);
  out["cached_line"] = change.cached_line > 0 ? json(change.cached_line) : json(nullptr);
  out["request"] = change.kind == hlo::InstructionChange::Kind::kRemoved ? json(nullptr) : json(change.current);
  out["cached"] = change.kind == hlo::InstructionChange::Kind::kAdded ? json(nullptr) : json(change.cached);
  return out;
}

// "constant %lr (line 12) is %lr = f32[] constant(0.002); the cached module
// has %lr = f32[] constant(0.001)".
std::string ChangeMessage(const hlo::InstructionChange& change) {
  std::string where = "%" + change.instruction;
  if (change.line > 0) where += " (line " + std::to_string(change.line) + ")";
  switch (change.kind) {
    case hlo::InstructionChange::Kind::kAdded:
      return where + " is new: " + change.current;
    case hlo::InstructionChange::Kind::kRemoved:
      return "%" + change.instruction + " of the cached module is gone: " + change.cached;
    case hlo::InstructionChange::Kind::kChanged:
      break;
  }
  if (change.value_only) {
    // Just the values: "constant(0.002)" beside "constant(0.001)".
    auto value = [](const std::string& text) { return "constant(" + hlo::ConstantValueText(text) + ")"; };
    return where + " is " + value(change.current) + " here, " + value(change.cached) + " in the cached module";
  }
  return where + " changed: " + change.current + " here, " + change.cached + " in the cached module";
}

bool OnlyTargetAndOptionsDiffer(const std::vector<std::string>& differing) {
  return std::all_of(differing.begin(), differing.end(),
                     [](const std::string& name) { return name == "target" || name == "options"; });
}

const json* FirstParameterDifference(const json& differences) {
  for (const json& difference : differences) {
    if (difference["component"].get<std::string>().starts_with("parameter ")) return &difference;
  }
  return nullptr;
}

bool ModuleBodyDiffers(const std::vector<std::string>& differing) {
  return std::any_of(differing.begin(), differing.end(), [](const std::string& name) {
    return name == "entry body" || name.starts_with("called computation");
  });
}

}  // namespace

Result<json> ExplainModule(cache::CacheStore& store, const std::string& tenant, const hlo::Module& module,
                           driver::CompileOptions options) {
  // The topology a compile of the module would take, so the key is its key.
  KILN_ASSIGN_OR_RETURN(const hlo::Fingerprint fingerprint, FingerprintForCompile(module, options));
  const std::vector<cache::KeyComponent> components = cache::KeyComponentsOf(fingerprint);
  const json options_json = json::parse(driver::OptionsJson(options));
  const std::string& chip = options.chip;
  json component_list = json::array();
  for (const cache::KeyComponent& component : components) {
    json item = {{"component", component.name}, {"hash", component.hash.Hex()}};
    json text = ComponentText(component.name, fingerprint.parameter_shape_text, chip, options_json);
    if (!text.is_null()) item["text"] = std::move(text);
    component_list.push_back(std::move(item));
  }
  json answer = {{"key", fingerprint.key.Hex()}, {"components", std::move(component_list)}};
  answer["differences"] = json::array();
  answer["changes"] = json::array();
  answer["changes_total"] = 0;
  answer["nearest"] = nullptr;

  // Only the tenant's own namespace: an entry of another one is not "cached".
  const cache::EntryId id{.tenant = tenant, .key = fingerprint.key, .chip = chip};
  KILN_ASSIGN_OR_RETURN(std::optional<cache::EntryMetadata> metadata, store.GetMetadata(id));
  const bool cached = metadata && !metadata->quarantined;
  answer["cached"] = cached;
  if (cached) {
    answer["message"] = "hit: the key is cached";
    answer["hits"] = metadata->hit_count;
    return answer;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<cache::Explanation> candidates,
                        store.NearestEntries(tenant, chip, fingerprint.format_version, components, kTiedCandidates));
  if (candidates.empty()) {
    answer["message"] = "miss: no cached entry shares any part of this module";
    return answer;
  }
  // Entries that share as many key components (a train step and an eval
  // step over the same weights share every parameter) are told apart by
  // how many of their instructions differ from this module's.
  size_t chosen = 0;
  std::optional<hlo::ModuleDiff> diff;
  std::optional<bool> text_kept;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].module_components_shared != candidates[0].module_components_shared) break;
    if (!ModuleBodyDiffers(candidates[i].differing)) break;
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> source, store.Source(candidates[i].nearest.id));
    if (i == 0) text_kept = source.has_value();
    if (!source) continue;
    // The text as it was sent: HLO, or StableHLO (text or bytecode).
    auto cached_module = stablehlo::ParseAnyModule(*source, "<cached>");
    if (!cached_module) continue;
    hlo::ModuleDiff candidate_diff = hlo::DiffModules(**cached_module, module);
    if (!diff || candidate_diff.total_changes < diff->total_changes) {
      diff = std::move(candidate_diff);
      chosen = i;
      text_kept = true;
    }
  }
  const cache::Explanation& nearest = candidates[chosen];
  const std::string& nearest_chip = nearest.nearest.id.chip;
  const EntryNotes notes = ParseEntryNotes(nearest.nearest.options);
  answer["nearest"] = {
      {"key", nearest.nearest.id.key.Hex()},
      {"chip", nearest_chip},
      {"plan", EntryPlanName(nearest.nearest)},
      {"created", Rfc3339(nearest.nearest.created_ms)},
      {"matching_components", nearest.shared_components},
      {"total_components", components.size()},
  };
  for (const std::string& name : nearest.differing) {
    json request_side = HasComponent(components, name)
                            ? ComponentText(name, fingerprint.parameter_shape_text, chip, options_json)
                            : json(nullptr);
    json nearest_side = HasComponent(nearest.nearest_components, name)
                            ? ComponentText(name, notes.parameters, nearest_chip, notes.options)
                            : json(nullptr);
    answer["differences"].push_back(Difference(name, std::move(request_side), std::move(nearest_side)));
  }

  if (text_kept) answer["cached_text_kept"] = *text_kept;
  if (diff) {
    for (const hlo::InstructionChange& change : diff->changes) answer["changes"].push_back(ChangeJson(change));
    answer["changes_total"] = diff->total_changes;
  }

  std::string message;
  if (OnlyTargetAndOptionsDiffer(nearest.differing) && nearest_chip != chip) {
    message = "miss: this module is cached for " + nearest_chip + ", not " + chip;
    if (std::find(nearest.differing.begin(), nearest.differing.end(), "options") != nearest.differing.end()) {
      message += " (and with other options)";
    }
  } else if (const json* parameter = FirstParameterDifference(answer["differences"])) {
    // A new shape explains every instruction it reaches.
    message = "miss: " + (*parameter)["message"].get<std::string>();
  } else if (diff && !diff->changes.empty()) {
    message = "miss: " + ChangeMessage(diff->changes.front());
    if (diff->total_changes > 1) message += " (and " + std::to_string(diff->total_changes - 1) + " more changes)";
  } else if (!answer["differences"].empty()) {
    message = "miss: " + answer["differences"][0]["message"].get<std::string>();
  } else {
    message = "miss: the nearest entry differs only in its key";
  }
  if (nearest_chip != chip && !OnlyTargetAndOptionsDiffer(nearest.differing)) {
    message += "; the nearest entry is for " + nearest_chip;
  }
  answer["message"] = std::move(message);
  return answer;
}

}  // namespace kiln::service
