// Partitioning one computation: internal to the partitioner
// (spmd_partitioner.h is the interface).
//
// A ComputationPartitioner walks a computation's instructions in order and
// writes, for each, per-partition instructions computing its value in the
// sharding propagation chose for it (collectives where the data of other
// partitions is needed). Operands are resharded to what each op needs; an op
// with no rule of its own runs whole on every partition (operands gathered,
// result sliced). Called computations (while bodies, calls, branches) are
// partitioned through the session, once per parameter layout. Not
// thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/sharding.h"
#include "compiler/spmd/hlo_text_builder.h"
#include "compiler/spmd/reshard.h"
#include "compiler/spmd/sharding_propagation.h"

namespace kiln::spmd {

// True for a manual sharding and a tuple sharding of manual leaves only.
bool AllManual(const hlo::HloSharding& sharding);

// A computation as written for partitions: its name and its root's layout.
struct WrittenComputation {
  std::string name;
  hlo::HloSharding root;
};

// State shared by the computations of one module's partitioning.
class PartitionSession {
 public:
  explicit PartitionSession(int64_t num_devices) : module_(num_devices) {}

  ModuleTextBuilder& module() { return module_; }
  // `computation` partitioned for parameters laid out as `parameters`, its
  // root resharded to `root` when given; written on first use.
  Result<WrittenComputation> Partitioned(const hlo::Computation& computation,
                                         const std::vector<hlo::HloSharding>& parameters,
                                         const std::optional<hlo::HloSharding>& root);

 private:
  ModuleTextBuilder module_;
  std::map<std::string, WrittenComputation> written_;
};

class ComputationPartitioner {
 public:
  ComputationPartitioner(const hlo::Computation& computation, PartitionSession& session, std::string name)
      : computation_(computation), session_(session), b_(session.module(), std::move(name)) {}

  // Writes the computation; returns its text and root layout.
  Result<std::pair<std::string, hlo::HloSharding>> Run(const std::vector<hlo::HloSharding>& parameters,
                                                  const std::optional<hlo::HloSharding>& root);

 private:
  using Instruction = hlo::Instruction;

  Result<PartitionedValue> Partition(const Instruction& instr, const hlo::HloSharding& target);
  const PartitionedValue& ValueOf(const Instruction* instr) const { return values_.at(instr); }
  // Operand i resharded to `target`.
  Result<PartitionedValue> Operand(const Instruction& instr, int64_t i, const hlo::HloSharding& target);

  // Writes `instr` again with `shape` and `operands`: its attributes but
  // sharding and control edges, `overrides` replacing (or adding) some, and
  // computations it calls copied verbatim unless overridden.
  std::string EmitLike(const Instruction& instr, const hlo::Shape& shape, const std::vector<std::string>& operands,
                       const std::map<std::string, std::string>& overrides = {});

  // Op rules (partition_ops.cc, partition_dot.cc). Each returns the value
  // in `target`.
  Result<PartitionedValue> Whole(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Elementwise(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Manual(const Instruction& instr);
  Result<PartitionedValue> Broadcast(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Transpose(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Reshape(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> KeepWholeDims(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Reduce(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> DynamicUpdateSlice(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Gather(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> Dot(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> CustomCall(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> ControlFlow(const Instruction& instr, const hlo::HloSharding& target);
  Result<PartitionedValue> TupleOps(const Instruction& instr, const hlo::HloSharding& target);

  // The sharding of a value of `global` shape whose dim j takes the tiles of
  // `target`'s dim from[j] (a layout for an operand from the result's).
  Result<hlo::HloSharding> Derived(const hlo::HloSharding& target, int64_t target_rank, const std::vector<int64_t>& from) const;

  const hlo::Computation& computation_;
  PartitionSession& session_;
  ComputationTextBuilder b_;
  ShardingMap shardings_;
  std::unordered_map<const Instruction*, PartitionedValue> values_;
  std::map<std::pair<const Instruction*, std::string>, PartitionedValue> resharded_;
};

}  // namespace kiln::spmd
