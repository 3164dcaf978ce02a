// ExecuteProgram: runs a LoadedProgram's kernels on the evaluator, moving
// values between buffers and releasing each temporary after its last reader.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/program/literal_leaves.h"
#include "runtime/program/loaded_program.h"

namespace kiln::runtime {
namespace {

// Index of the last kernel reading each buffer; -1 when none does.
std::vector<int64_t> LastReaders(const Program& p) {
  std::vector<int64_t> last(p.buffers.size(), -1);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    for (uint32_t b : p.kernels[k].inputs) last[b] = static_cast<int64_t>(k);
  }
  return last;
}

}  // namespace

Result<hlo::Literal> ExecuteProgram(const LoadedProgram& lp, std::span<const hlo::Literal> args,
                                    const EvalOptions& options,
                                    std::span<ControlFlowObserver* const> kernel_observers) {
  const Program& p = lp.program();
  if (!kernel_observers.empty() && kernel_observers.size() != p.kernels.size()) {
    return InternalError(std::to_string(kernel_observers.size()) + " control-flow observers for " +
                         std::to_string(p.kernels.size()) + " kernels");
  }
  EvalOptions kernel_options = options;
  std::vector<hlo::Literal> arrays;
  for (const hlo::Literal& arg : args) FlattenLiteral(arg, arrays);
  if (arrays.size() != p.parameters.size()) {
    return InvalidArgumentError("arguments hold " + std::to_string(arrays.size()) +
                                " arrays, the executable's parameters " + std::to_string(p.parameters.size()));
  }
  std::vector<hlo::Literal> values(p.buffers.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    uint32_t b = p.parameters[i];
    const hlo::Shape& want = lp.buffer_shape(b);
    if (!ValueFitsShape(arrays[i].shape(), want)) {
      return InvalidArgumentError("argument " + std::to_string(p.buffers[b].parameter_number) + " holds " +
                                  arrays[i].shape().ToString() + " where the parameter has " + want.ToString());
    }
    values[b] = std::move(arrays[i]);
  }
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (const hlo::Literal* c = lp.constant(b)) values[b] = *c;
  }
  std::vector<bool> is_result(p.buffers.size(), false);
  for (uint32_t b : p.results) is_result[b] = true;
  const std::vector<int64_t> last_reader = LastReaders(p);

  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const ProgramKernel& kernel = p.kernels[k];
    std::vector<hlo::Literal> inputs;
    inputs.reserve(kernel.inputs.size());
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      const uint32_t b = kernel.inputs[i];
      // The last read of a temporary takes its value instead of copying it.
      bool last_use = last_reader[b] == static_cast<int64_t>(k) && !is_result[b] &&
                      p.buffers[b].kind == BufferKind::kTemp &&
                      std::find(kernel.inputs.begin() + i + 1, kernel.inputs.end(), b) ==
                          kernel.inputs.end();
      inputs.push_back(last_use ? std::move(values[b]) : values[b]);
    }
    if (!kernel_observers.empty()) kernel_options.control_flow = kernel_observers[k];
    auto out = EvaluateModule(lp.kernel_module(k), inputs, kernel_options);
    if (!out) {
      return out.error().WithContext("kernel " + std::to_string(k) + " (" + kernel.name + ")");
    }
    if (kernel.outputs.size() == 1) {
      values[kernel.outputs[0]] = std::move(*out);
    } else {
      std::vector<hlo::Literal> elements = out->ReleaseTupleElements();
      for (size_t i = 0; i < kernel.outputs.size(); ++i) {
        values[kernel.outputs[i]] = std::move(elements[i]);
      }
    }
  }
  std::vector<hlo::Literal> leaves;
  leaves.reserve(p.results.size());
  for (size_t i = 0; i < p.results.size(); ++i) {
    const uint32_t b = p.results[i];
    const bool listed_again =
        std::find(p.results.begin() + i + 1, p.results.end(), b) != p.results.end();
    leaves.push_back(listed_again ? values[b] : std::move(values[b]));
  }
  size_t next = 0;
  return AssembleLiteral(lp.result_shape(), leaves, next);
}

}  // namespace kiln::runtime
