// LoadedProgram: a verified Program with its kernels parsed, ready to run
// any number of times.
//
// Load parses every kernel's HLO module and checks it against the buffer
// table (parameter count and shapes equal the kernel's input buffers, the
// result's elements equal its output buffers), and parses constant buffers.
// A LoadedProgram owns its modules and is immutable after Load: concurrent
// executions of one LoadedProgram are safe.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "runtime/eval/evaluator.h"
#include "runtime/format/program.h"

namespace kiln::runtime {

class LoadedProgram {
 public:
  static Result<std::unique_ptr<LoadedProgram>> Load(Program program);
  // ParseProgram + Load.
  static Result<std::unique_ptr<LoadedProgram>> FromBytes(std::span<const uint8_t> bytes);

  const Program& program() const { return program_; }
  const hlo::Module& kernel_module(size_t k) const { return *modules_[k]; }
  // Array shape of each buffer, parsed from the buffer table.
  const hlo::Shape& buffer_shape(size_t b) const { return buffer_shapes_[b]; }
  // The shape of the program's result.
  const hlo::Shape& result_shape() const { return result_shape_; }
  // Value of a constant buffer; nullptr for other kinds.
  const hlo::Literal* constant(size_t b) const { return constants_[b].get(); }

 private:
  LoadedProgram() = default;
  Program program_;
  std::vector<std::unique_ptr<hlo::Module>> modules_;
  std::vector<hlo::Shape> buffer_shapes_;
  hlo::Shape result_shape_;
  std::vector<std::unique_ptr<hlo::Literal>> constants_;
};

// Runs the program's kernels in order on the evaluator. `args[i]` is entry
// parameter i (shape checked). Returns the result (a tuple literal when the
// program's result is a tuple). Errors name the kernel that failed.
// `kernel_observers` is empty or holds one entry (maybe nullptr) per kernel:
// kernel k then runs with options.control_flow = kernel_observers[k], so a
// caller can learn each kernel's loop trips and branches (borrowed).
Result<hlo::Literal> ExecuteProgram(const LoadedProgram& program, std::span<const hlo::Literal> args,
                                    const EvalOptions& options = {},
                                    std::span<ControlFlowObserver* const> kernel_observers = {});

}  // namespace kiln::runtime
