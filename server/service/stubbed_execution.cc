#include "server/service/stubbed_execution.h"

#include <xxhash.h>

#include <algorithm>

#include "runtime/io/literal_compare.h"
#include "runtime/io/random_inputs.h"
#include "runtime/program/literal_leaves.h"

namespace kiln::service {

Result<StubbedRun> ExecuteWithStubs(const runtime::LoadedProgram& lp, std::span<const hlo::Literal> args,
                                    const runtime::EvalOptions& options, uint64_t seed,
                                    std::optional<std::chrono::steady_clock::time_point> deadline,
                                    const std::function<Status()>& before_kernel) {
  const runtime::Program& p = lp.program();
  std::vector<hlo::Literal> arrays;
  for (const hlo::Literal& arg : args) runtime::FlattenLiteral(arg, arrays);
  if (arrays.size() != p.parameters.size()) {
    return InvalidArgumentError("arguments hold " + std::to_string(arrays.size()) + " arrays, the executable's parameters " +
                                std::to_string(p.parameters.size()));
  }
  std::vector<hlo::Literal> values(p.buffers.size());
  for (size_t i = 0; i < arrays.size(); ++i) values[p.parameters[i]] = std::move(arrays[i]);
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (const hlo::Literal* c = lp.constant(b)) values[b] = *c;
  }
  std::vector<int64_t> last_reader(p.buffers.size(), -1);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    for (uint32_t b : p.kernels[k].inputs) last_reader[b] = static_cast<int64_t>(k);
  }
  std::vector<bool> keep(p.buffers.size(), false);
  for (uint32_t b : p.results) keep[b] = true;

  StubbedRun run;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const runtime::ProgramKernel& kernel = p.kernels[k];
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      return Error::Coded(ErrorCode::kDeadlineExceeded, "evaluation stopped at its time limit, before kernel " +
                                                            std::to_string(k) + " of " + std::to_string(p.kernels.size()));
    }
    if (before_kernel) KILN_RETURN_IF_ERROR(before_kernel());
    std::vector<hlo::Literal> inputs;
    for (uint32_t b : kernel.inputs) inputs.push_back(values[b]);
    Result<hlo::Literal> out = runtime::EvaluateModule(lp.kernel_module(k), inputs, options);
    std::vector<hlo::Literal> outputs;
    if (out) {
      if (kernel.outputs.size() == 1) {
        outputs.push_back(*std::move(out));
      } else {
        outputs = out->ReleaseTupleElements();
      }
    } else if (out.error().code == ErrorCode::kUnimplemented) {
      const uint64_t kernel_seed = XXH64(kernel.hlo.data(), kernel.hlo.size(), seed);
      for (size_t i = 0; i < kernel.outputs.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(hlo::Literal stub,
                              runtime::io::RandomLiteral(lp.buffer_shape(kernel.outputs[i]), kernel_seed + i));
        outputs.push_back(std::move(stub));
      }
      run.stubbed_inputs[kernel.name] = std::move(inputs);
    } else {
      return out.error().WithContext("kernel " + std::to_string(k) + " (" + kernel.name + ")");
    }
    if (outputs.size() != kernel.outputs.size()) {
      return InternalError("kernel " + kernel.name + " gave " + std::to_string(outputs.size()) + " arrays for " +
                           std::to_string(kernel.outputs.size()) + " buffers");
    }
    for (size_t i = 0; i < kernel.outputs.size(); ++i) values[kernel.outputs[i]] = std::move(outputs[i]);
    for (uint32_t b : kernel.inputs) {
      if (last_reader[b] == static_cast<int64_t>(k) && !keep[b] && p.buffers[b].kind == runtime::BufferKind::kTemp) {
        values[b] = hlo::Literal();
      }
    }
  }
  for (uint32_t b : p.results) run.results.push_back(values[b]);
  return run;
}

Status CompareStubbedRuns(const StubbedRun& reference, const StubbedRun& candidate) {
  if (reference.results.size() != candidate.results.size()) {
    return FailedPreconditionError("the candidate has " + std::to_string(candidate.results.size()) +
                                   " result arrays, the reference " + std::to_string(reference.results.size()));
  }
  for (size_t i = 0; i < reference.results.size(); ++i) {
    Status same = runtime::io::CompareLiterals(reference.results[i], candidate.results[i]);
    if (!same) return FailedPreconditionError("result array " + std::to_string(i) + ": " + same.error().ToString());
  }
  for (const auto& [name, inputs] : candidate.stubbed_inputs) {
    auto it = reference.stubbed_inputs.find(name);
    if (it == reference.stubbed_inputs.end() || it->second.size() != inputs.size()) {
      return FailedPreconditionError("kernel " + name + " cannot be evaluated and is not the reference's");
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      Status same = runtime::io::CompareLiterals(it->second[i], inputs[i]);
      if (!same) {
        return FailedPreconditionError("input " + std::to_string(i) + " of kernel " + name + ": " +
                                       same.error().ToString());
      }
    }
  }
  return Ok();
}

}  // namespace kiln::service
