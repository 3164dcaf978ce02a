#include "compiler/lowering/compile_module.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <cctype>

#include "compiler/lowering/lower_to_program.h"

namespace kiln::lowering {
namespace {

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string CanonicalOptionsText(const fusion::CompileOptions& options) {
  std::string text = "plan=" + std::string(fusion::PlanKindName(options.plan));
  if (options.scoped_vmem_bytes != 0) {
    text += ";scoped_vmem_bytes=" + std::to_string(options.scoped_vmem_bytes);
  }
  return text;
}

std::string OptionsJson(const fusion::CompileOptions& options) {
  return "{\"plan\":\"" + std::string(fusion::PlanKindName(options.plan)) +
         "\",\"scoped_vmem_bytes\":" + std::to_string(options.scoped_vmem_bytes) + "}";
}

hlo::FingerprintOptions FingerprintOptionsFor(const fusion::CompileOptions& options) {
  hlo::FingerprintOptions fp;
  fp.chip = Lowercase(options.chip);
  fp.compile_options = CanonicalOptionsText(options);
  return fp;
}

Result<CompileOutput> CompileModule(hlo::Module& module, const fusion::CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompileOutput out;
  KILN_ASSIGN_OR_RETURN(out.fingerprint,
                        hlo::FingerprintModule(module, FingerprintOptionsFor(options)));
  fusion::CompileOptions normalized = options;
  normalized.chip = Lowercase(options.chip);
  KILN_ASSIGN_OR_RETURN(fusion::CompiledPlan compiled, fusion::PlanModule(module, normalized));

  LoweringInput in;
  in.module = &module;
  in.plan = &compiled.plan;
  for (const fusion::KernelCost& cost : compiled.cost.kernels) {
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
  KILN_ASSIGN_OR_RETURN(out.program, LowerToProgram(in));

  for (const fusion::Kernel& k : compiled.plan.kernels) {
    if (k.instructions.size() > 1) out.fused_instructions += static_cast<int64_t>(k.instructions.size());
  }
  out.kernels = static_cast<int64_t>(out.program.kernels.size());
  out.peak_hbm_bytes = out.program.peak_hbm_bytes;
  out.estimated_us = compiled.estimated_us;
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.program.compile_ms = out.compile_ms;
  out.executable = runtime::SerializeProgram(out.program);
  out.fusion_edges = std::move(compiled.plan.edges);
  return out;
}

}  // namespace kiln::lowering
