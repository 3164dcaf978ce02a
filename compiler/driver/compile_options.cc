#include "compiler/driver/compile_options.h"

#include <cctype>

#include "runtime/chip/chip_spec.h"
#include "runtime/chip/topology.h"

namespace kiln::driver {
namespace {

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<fusion::PlanKind> ParsePlanKind(std::string_view name) {
  using fusion::PlanKind;
  for (PlanKind kind : {PlanKind::kNone, PlanKind::kHeuristic, PlanKind::kGiven}) {
    if (fusion::PlanKindName(kind) == name) return kind;
  }
  return InvalidArgumentError("unknown plan '" + std::string(name) + "': expected none, heuristic or given");
}

std::string CanonicalOptionsText(const CompileOptions& options) {
  std::string text = "plan=" + std::string(fusion::PlanKindName(options.plan));
  if (options.scoped_vmem_bytes != 0) {
    text += ";scoped_vmem_bytes=" + std::to_string(options.scoped_vmem_bytes);
  }
  if (!options.topology.empty()) text += ";topology=" + options.topology;
  return text;
}

std::string OptionsJson(const CompileOptions& options) {
  std::string json = "{\"plan\":\"" + std::string(fusion::PlanKindName(options.plan)) +
                     "\",\"scoped_vmem_bytes\":" + std::to_string(options.scoped_vmem_bytes);
  if (!options.topology.empty()) json += ",\"topology\":\"" + options.topology + "\"";
  return json + "}";
}

hlo::FingerprintOptions FingerprintOptionsFor(const CompileOptions& options) {
  hlo::FingerprintOptions fp;
  fp.chip = Lowercase(options.chip);
  fp.compile_options = CanonicalOptionsText(options);
  return fp;
}

Result<std::string> CanonicalTopology(std::string_view topology, std::string_view chip) {
  if (topology.empty()) return std::string();
  const runtime::ChipSpec* spec = runtime::FindChip(Lowercase(std::string(chip)));
  if (spec == nullptr) return InvalidArgumentError("unknown chip '" + std::string(chip) + "'");
  KILN_ASSIGN_OR_RETURN(runtime::Topology parsed, runtime::ParseTopology(topology, *spec));
  return parsed.chips() == 1 ? std::string() : parsed.ToString();
}

CompileOptions NormalizedOptions(const CompileOptions& options) {
  CompileOptions normalized = options;
  normalized.chip = Lowercase(options.chip);
  return normalized;
}

}  // namespace kiln::driver
