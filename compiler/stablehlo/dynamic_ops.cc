#include "compiler/stablehlo/dynamic_ops.h"

#include <array>

namespace kiln::stablehlo {

bool IsDynamicShapeTarget(std::string_view target) {
  static constexpr std::array<std::string_view, 7> kTargets = {
      kDynamicBroadcastInDimTarget, kDynamicReshapeTarget, kDynamicIotaTarget, kRealDynamicSliceTarget,
      kDynamicPadTarget,            kDynamicGatherTarget,  kDynamicConvTarget};
  for (std::string_view t : kTargets) {
    if (t == target) return true;
  }
  return false;
}

std::string ConfigPairsText(const ConfigPairs& pairs) {
  std::string out;
  for (const auto& [name, value] : pairs) {
    if (!out.empty()) out += ';';
    out += name + "=" + value;
  }
  return out;
}

ConfigPairs ParseConfigPairs(std::string_view text) {
  ConfigPairs out;
  while (!text.empty()) {
    const size_t end = text.find(';');
    const std::string_view piece = text.substr(0, end);
    const size_t eq = piece.find('=');
    if (eq != std::string_view::npos) out.emplace_back(std::string(piece.substr(0, eq)), std::string(piece.substr(eq + 1)));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace kiln::stablehlo
