#include "cache/components.h"

#include <unordered_map>

namespace kiln::cache {

std::vector<KeyComponent> KeyComponentsOf(const hlo::Fingerprint& fingerprint) {
  std::vector<KeyComponent> components;
  for (size_t i = 0; i < fingerprint.parameter_shapes.size(); ++i) {
    components.push_back({"parameter " + std::to_string(i), fingerprint.parameter_shapes[i]});
  }
  components.push_back({"entry body", fingerprint.entry_body});
  for (size_t i = 0; i < fingerprint.called_computations.size(); ++i) {
    components.push_back({"called computation " + std::to_string(i), fingerprint.called_computations[i].hash});
  }
  components.push_back({"module config", fingerprint.module_config});
  components.push_back({"options", fingerprint.options});
  components.push_back({"target", fingerprint.target});
  return components;
}

std::vector<std::string> DifferingComponents(const std::vector<KeyComponent>& query,
                                             const std::vector<KeyComponent>& stored) {
  std::unordered_map<std::string, Hash128> stored_by_name;
  for (const KeyComponent& component : stored) stored_by_name.emplace(component.name, component.hash);
  std::vector<std::string> differing;
  for (const KeyComponent& component : query) {
    auto it = stored_by_name.find(component.name);
    if (it == stored_by_name.end() || it->second != component.hash) differing.push_back(component.name);
    if (it != stored_by_name.end()) stored_by_name.erase(it);
  }
  for (const KeyComponent& component : stored) {
    if (stored_by_name.contains(component.name)) differing.push_back(component.name);
  }
  return differing;
}

}  // namespace kiln::cache
