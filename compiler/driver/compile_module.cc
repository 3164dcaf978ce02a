#include "compiler/driver/compile_module.h"

#include <algorithm>
#include <utility>

#include "compiler/driver/device_estimate.h"
#include "compiler/driver/stopwatch.h"
#include "compiler/hlo/attribute.h"
#include "compiler/hlo/collective_groups.h"
#include "compiler/lowering/lower_to_program.h"

namespace kiln::driver {

namespace {

// Whether every collective of `module` groups replicas (has no channel_id),
// and there is at least one.
bool OnlyCrossReplicaCollectives(const hlo::Module& module) {
  bool any = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (hlo::CategoryOf(instr->opcode()) != hlo::OpcodeCategory::kCollective) continue;
      if (instr->FindAttribute("channel_id") != nullptr) return false;
      any = true;
    }
  }
  return any;
}

// How many replicas a program for `chips` chips runs: the module header's
// replica_count; without a header (num_partitions or replica_count), a
// module whose collectives all group replicas (no channel_id: torch_xla's
// data-parallel dumps) runs one replica per chip; else 1.
Result<uint32_t> ReplicaCount(const hlo::Module& module, int64_t chips) {
  const hlo::Attribute* attribute = module.FindAttribute("replica_count");
  if (attribute == nullptr) {
    const bool headless = module.FindAttribute("num_partitions") == nullptr;
    return headless && OnlyCrossReplicaCollectives(module) ? static_cast<uint32_t>(chips) : 1u;
  }
  Result<int64_t> count = hlo::DecodeInt(attribute->value);
  if (!count || *count < 1 || *count > int64_t{1} << 20) {
    return InvalidArgumentError("HloModule header: replica_count=" + std::string(attribute->value) +
                                " is not a positive integer");
  }
  return static_cast<uint32_t>(*count);
}

Status CheckFingerprinted(const PreparedModule& prepared) {
  if (prepared.source_fingerprint) return Ok();
  return FailedPreconditionError("the module was prepared without its fingerprint: use PrepareModule");
}

}  // namespace

Result<CompileOutput> LowerWithPlan(const PreparedModule& prepared, const CompileOptions& options) {
  KILN_RETURN_IF_ERROR(CheckFingerprinted(prepared));
  const CompileOptions normalized = NormalizedOptions(options);
  KILN_ASSIGN_OR_RETURN(CompiledPlan compiled, PlanPrepared(prepared, normalized));
  return LowerPlanned(prepared, normalized, std::move(compiled));
}

Result<CompileOutput> LowerPlanned(const PreparedModule& prepared, const CompileOptions& options,
                                   CompiledPlan compiled) {
  Stopwatch watch;
  KILN_RETURN_IF_ERROR(CheckFingerprinted(prepared));
  const CompileOptions normalized = NormalizedOptions(options);
  CompileOutput out;
  out.fingerprint = hlo::FingerprintWithOptions(*prepared.source_fingerprint, FingerprintOptionsFor(normalized));

  const hlo::Module& module = *prepared.module;
  lowering::LoweringInput in;
  in.module = &module;
  in.plan = &compiled.plan;
  for (const cost::KernelCost& cost : compiled.cost.kernels) {
    in.estimates.push_back({cost.mxu_flops + cost.vector_flops, cost.hbm_bytes, cost.seconds});
  }
  const int64_t n = module.entry()->instruction_count();
  in.value_offsets.assign(n, 0);
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(compiled.buffers.buffer_of.size()); ++i) {
    int64_t b = compiled.buffers.buffer_of[i];
    if (b >= 0) in.value_offsets[i] = compiled.buffers.buffers[b].offset;
  }
  in.key = out.fingerprint.key.Hex();
  in.chip = normalized.chip;
  in.options_json = OptionsJson(normalized);
  in.peak_hbm_bytes = static_cast<uint64_t>(std::max<int64_t>(compiled.buffers.peak_bytes, 0));
  KILN_ASSIGN_OR_RETURN(out.program, lowering::LowerToProgram(in));
  if (!normalized.topology.empty()) {
    out.program.topology = normalized.topology;
    KILN_ASSIGN_OR_RETURN(int64_t slice_chips, runtime::ProgramChipCount(out.program));
    KILN_ASSIGN_OR_RETURN(out.program.replica_count, ReplicaCount(module, slice_chips));
    if (prepared.global_signature) {
      out.program.global_parameter_shapes = prepared.global_signature->parameter_shapes;
      out.program.parameter_shardings = prepared.global_signature->parameter_shardings;
      out.program.global_result_shape = prepared.global_signature->result_shape;
      out.program.result_sharding = prepared.global_signature->result_sharding;
    }
    KILN_RETURN_IF_ERROR(runtime::VerifyProgram(out.program));
    // Every collective must name devices of this slice, each once: refused
    // here, naming the instruction, instead of failing at execute or time.
    KILN_ASSIGN_OR_RETURN(int64_t chips, runtime::ProgramChipCount(out.program));
    const int64_t replicas = out.program.replica_count;
    KILN_RETURN_IF_ERROR(hlo::CheckCollectives(module, replicas, chips / replicas));
  }

  for (const fusion::Kernel& k : compiled.plan.kernels) {
    if (k.instructions.size() > 1) out.fused_instructions += static_cast<int64_t>(k.instructions.size());
  }
  out.kernels = static_cast<int64_t>(out.program.kernels.size());
  out.peak_hbm_bytes = out.program.peak_hbm_bytes;
  out.estimated_us = compiled.estimated_us;
  out.cost_model_us = compiled.estimated_us;
  const StageTimes& t = compiled.times;
  out.compile_ms = prepared.prepare_ms + t.planning_ms + t.buffers_ms + t.cost_ms + watch.LapMs();
  out.program.compile_ms = out.compile_ms;
  KILN_ASSIGN_OR_RETURN(out.executable, runtime::SerializeProgram(out.program));
  out.fusion_edges = std::move(compiled.plan.edges);
  return out;
}

Result<CompileOutput> CompileModule(hlo::Module& module, const CompileOptions& options) {
  KILN_ASSIGN_OR_RETURN(PreparedModule prepared, PrepareModule(module, options));
  KILN_ASSIGN_OR_RETURN(CompileOutput out, LowerWithPlan(prepared, options));
  EstimateDeviceTime(out);
  return out;
}

}  // namespace kiln::driver
