#include "compiler/spmd/hlo_text_builder.h"

#include "base/str_cat.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/int_list_text.h"

namespace kiln::spmd {

using hlo::IntListText;

std::string OperandList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += '%';
    out += names[i];
  }
  return out;
}

std::string ModuleTextBuilder::UniqueComputationName(std::string_view base) {
  std::string name(base);
  for (int64_t n = 1; computation_names_.contains(name); ++n) name = StrCat(base, ".", n);
  computation_names_.insert(name);
  return name;
}

std::string ModuleTextBuilder::CopyVerbatim(const hlo::Computation& computation) {
  if (auto it = copied_.find(&computation); it != copied_.end()) return it->second;
  for (const auto& instr : computation.instructions()) {
    for (const hlo::Computation* callee : instr->called_computations()) CopyVerbatim(*callee);
  }
  // Verbatim copies keep their names (the partitioned computations take
  // fresh ones), so the references inside them still resolve.
  computation_names_.insert(computation.name());
  copied_.emplace(&computation, computation.name());
  computations_.push_back(hlo::PrintComputation(computation));
  return computation.name();
}

std::string ModuleTextBuilder::Reducer(hlo::PrimitiveType type, std::string_view opcode) {
  std::string scalar = hlo::Shape(type, {}).ToString();
  std::string key = StrCat(opcode, ".", scalar);
  if (auto it = reducers_.find(key); it != reducers_.end()) return it->second;
  std::string name = UniqueComputationName(StrCat("spmd.", opcode, ".", hlo::PrimitiveTypeName(type)));
  computations_.push_back(StrCat("%", name, " {\n  %a = ", scalar, " parameter(0)\n  %b = ", scalar,
                                 " parameter(1)\n  ROOT %r = ", scalar, " ", opcode, "(%a, %b)\n}"));
  reducers_.emplace(key, name);
  return name;
}

std::string ModuleTextBuilder::ModuleText(std::string_view name, std::string_view header_attributes,
                                          std::string_view entry_text) const {
  std::string out = StrCat("HloModule ", name, ", num_partitions=", num_devices_);
  if (!header_attributes.empty()) out += StrCat(", ", header_attributes);
  out += "\n";
  for (const std::string& c : computations_) out += StrCat("\n", c, "\n");
  out += StrCat("\nENTRY ", entry_text, "\n");
  return out;
}

std::string ComputationTextBuilder::Add(std::string_view base, const hlo::Shape& shape, std::string_view body) {
  std::string name(base);
  for (int64_t n = 1; names_.contains(name); ++n) name = StrCat(base, ".", n);
  names_.insert(name);
  lines_.emplace_back(name, StrCat(shape.ToString(), " ", body));
  return name;
}

std::string ComputationTextBuilder::PartitionId() {
  if (partition_id_.empty()) {
    std::string id = Add("partition-id", hlo::Shape(hlo::PrimitiveType::kU32, {}), "partition-id()");
    partition_id_ = Add("partition-id.s32", hlo::Shape(hlo::PrimitiveType::kS32, {}), StrCat("convert(%", id, ")"));
  }
  return partition_id_;
}

std::string ComputationTextBuilder::ScalarConstant(hlo::PrimitiveType type, std::string_view value_text) {
  hlo::Shape shape(type, {});
  std::string key = StrCat(shape.ToString(), " ", value_text);
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  std::string name = Add("constant", shape, StrCat("constant(", value_text, ")"));
  constants_.emplace(key, name);
  return name;
}

std::string ComputationTextBuilder::PerDeviceValue(const std::vector<int64_t>& per_device) {
  bool uniform = true;
  for (int64_t v : per_device) uniform &= v == per_device[0];
  if (uniform) return ScalarConstant(hlo::PrimitiveType::kS32, std::to_string(per_device[0]));
  if (auto it = per_device_.find(per_device); it != per_device_.end()) return it->second;
  hlo::Shape table_shape(hlo::PrimitiveType::kS32, {static_cast<int64_t>(per_device.size())});
  std::string table = Add("offsets", table_shape, StrCat("constant(", IntListText(per_device), ")"));
  std::string entry = Add("offset", hlo::Shape(hlo::PrimitiveType::kS32, {1}),
                          StrCat("dynamic-slice(%", table, ", %", PartitionId(), "), dynamic_slice_sizes={1}"));
  std::string scalar = Add("offset", hlo::Shape(hlo::PrimitiveType::kS32, {}), StrCat("reshape(%", entry, ")"));
  per_device_.emplace(per_device, scalar);
  return scalar;
}

std::string ComputationTextBuilder::Finish(const std::string& root) const {
  std::string out = StrCat("%", name_, " {\n");
  for (const auto& [name, text] : lines_) {
    out += StrCat("  ", name == root ? "ROOT " : "", "%", name, " = ", text, "\n");
  }
  return out + "}";
}

}  // namespace kiln::spmd
