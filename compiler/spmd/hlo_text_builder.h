// Builders for the HLO text of a partitioned module. The partitioner writes
// each per-partition computation as text and parses the whole module once at
// the end (the parser checks what was written; passes then see an ordinary
// module).
//
// ModuleTextBuilder owns the module-wide state: computations written so far
// (callees before callers), channel ids, scalar reducers and verbatim copies
// of the input's scalar computations. ComputationTextBuilder writes one
// computation's instructions with names unique in it. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/shape.h"

namespace kiln::spmd {

class ModuleTextBuilder {
 public:
  explicit ModuleTextBuilder(int64_t num_devices) : num_devices_(num_devices) {}

  int64_t num_devices() const { return num_devices_; }
  int64_t NextChannelId() { return next_channel_id_++; }

  // A computation name not used yet, from `base`.
  std::string UniqueComputationName(std::string_view base);
  // Appends a finished computation's text (its callees must be added first).
  void AddComputation(std::string text) { computations_.push_back(std::move(text)); }
  // The name of `computation` copied unchanged (with what it calls) into the
  // output, copying it on first use.
  std::string CopyVerbatim(const hlo::Computation& computation);
  // A scalar computation combining two values of `type` with `opcode`
  // ("add", "or", "maximum"), written on first use.
  std::string Reducer(hlo::PrimitiveType type, std::string_view opcode);

  // The whole module: header (name, num_partitions, extra header
  // attributes), computations, then `entry_text` marked ENTRY.
  std::string ModuleText(std::string_view name, std::string_view header_attributes,
                         std::string_view entry_text) const;

 private:
  int64_t num_devices_;
  int64_t next_channel_id_ = 1;
  std::vector<std::string> computations_;
  std::set<std::string> computation_names_;
  std::map<const hlo::Computation*, std::string> copied_;
  std::map<std::string, std::string> reducers_;
};

class ComputationTextBuilder {
 public:
  ComputationTextBuilder(ModuleTextBuilder& module, std::string name) : module_(module), name_(std::move(name)) {}

  ModuleTextBuilder& module() { return module_; }
  int64_t num_devices() const { return module_.num_devices(); }

  // Writes `%<name> = <shape> <body>` with a fresh name made from `base`;
  // returns the name (without '%'). `body` is the opcode, operands and
  // attributes: "add(%a, %b)", "parameter(0)".
  std::string Add(std::string_view base, const hlo::Shape& shape, std::string_view body);

  // This device's partition id as s32[], written once.
  std::string PartitionId();
  // A scalar s32 whose value on device d is per_device[d] (a constant when
  // all agree, else a lookup in a table indexed by partition id); cached.
  std::string PerDeviceValue(const std::vector<int64_t>& per_device);
  // A scalar constant of `type` ("s32[] constant(3)"); cached.
  std::string ScalarConstant(hlo::PrimitiveType type, std::string_view value_text);

  // The computation's text with `root` as ROOT.
  std::string Finish(const std::string& root) const;
  const std::string& name() const { return name_; }

 private:
  ModuleTextBuilder& module_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> lines_;  // name, text after "%name = "
  std::set<std::string> names_;
  std::string partition_id_;
  std::map<std::vector<int64_t>, std::string> per_device_;
  std::map<std::string, std::string> constants_;
};

// "%a, %b" from {"a", "b"}.
std::string OperandList(const std::vector<std::string>& names);

}  // namespace kiln::spmd
