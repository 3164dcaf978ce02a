#include "compiler/spmd/entry_shardings.h"

#include <algorithm>

#include "base/str_cat.h"

namespace kiln::spmd {

using hlo::Literal;

Result<std::vector<hlo::HloSharding>> EntryParameterShardings(const hlo::Module& module, int64_t num_devices) {
  std::vector<hlo::HloSharding> out;
  for (const hlo::Instruction* param : module.entry()->parameters()) {
    if (param == nullptr) return InvalidArgumentError("the entry computation misses a parameter");
    KILN_ASSIGN_OR_RETURN(std::optional<hlo::HloSharding> s, hlo::InstructionSharding(*param, num_devices));
    out.push_back(s.value_or(hlo::HloSharding::Replicate()));
  }
  return out;
}

Result<hlo::HloSharding> EntryRootSharding(const hlo::Module& module, int64_t num_devices) {
  const hlo::Instruction& root = *module.entry()->root();
  KILN_ASSIGN_OR_RETURN(std::optional<hlo::HloSharding> s, hlo::InstructionSharding(root, num_devices));
  if (s) return *s;
  // allow_spmd_sharding_propagation_to_output={true,false,...}: one flag per
  // result leaf (or one for all) saying it may keep its propagated layout.
  const hlo::Attribute* allow = module.FindAttribute("allow_spmd_sharding_propagation_to_output");
  if (allow == nullptr) return hlo::HloSharding::Replicate();
  std::vector<bool> flags;
  for (size_t at = 0; (at = allow->value.find_first_of("tf", at)) != std::string::npos; ++at) {
    flags.push_back(allow->value.compare(at, 4, "true") == 0);
    at = allow->value.find_first_of(",}", at);
    if (at == std::string::npos) break;
  }
  int64_t leaves = hlo::ShapeLeafCount(root.shape());
  if (flags.size() == 1) flags.assign(leaves, flags[0]);
  if (static_cast<int64_t>(flags.size()) != leaves || std::find(flags.begin(), flags.end(), true) == flags.end()) {
    return hlo::HloSharding::Replicate();
  }
  KILN_ASSIGN_OR_RETURN(ShardingMap propagated, PropagateEntry(module, num_devices));
  std::vector<hlo::HloSharding> chosen = propagated.at(&root).LeafShardings(root.shape());
  for (int64_t i = 0; i < leaves; ++i) {
    // Manual leaves have no global layout; they are gathered.
    if (!flags[i] || chosen[i].IsManual() || chosen[i].HasManualSubgroup()) chosen[i] = hlo::HloSharding::Replicate();
  }
  if (!root.shape().IsTuple()) return chosen[0];
  return hlo::HloSharding::Tuple(std::move(chosen));
}

Result<ShardingMap> PropagateEntry(const hlo::Module& module, int64_t num_devices) {
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::HloSharding> parameters, EntryParameterShardings(module, num_devices));
  return PropagateShardings(*module.entry(), parameters, num_devices);
}

Result<std::vector<std::vector<Literal>>> SplitArguments(const hlo::Module& module, std::span<const Literal> args,
                                                         int64_t num_devices) {
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::HloSharding> shardings, EntryParameterShardings(module, num_devices));
  if (shardings.size() != args.size()) {
    return InvalidArgumentError(StrCat("the module takes ", shardings.size(), " arguments, got ", args.size()));
  }
  std::vector<std::vector<Literal>> out(num_devices);
  for (size_t i = 0; i < args.size(); ++i) {
    Result<std::vector<Literal>> parts = hlo::SplitLiteral(args[i], shardings[i], num_devices);
    if (!parts) return parts.error().WithContext(StrCat("argument ", i));
    for (int64_t d = 0; d < num_devices; ++d) out[d].push_back(std::move((*parts)[d]));
  }
  return out;
}

}  // namespace kiln::spmd
