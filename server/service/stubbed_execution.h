// Running an executable for the autotuner's output check when some of its
// kernels are ops the evaluator lacks (a vendor custom call such as
// "AwsNeuronGelu"): such a kernel, which the tuner never fuses or changes,
// is replaced by a stub whose outputs are random values made from its HLO
// text and the run's seed, so the reference and a candidate get the same
// values from it; its inputs are kept, so the check can demand that both
// programs feed it equal values. Everything else is evaluated as
// ExecuteProgram does, each temporary released after its last reader.
//
// Borrows its arguments for the call; thread-safe for distinct programs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"
#include "runtime/eval/evaluator.h"
#include "runtime/program/loaded_program.h"

namespace kiln::service {

struct StubbedRun {
  std::vector<hlo::Literal> results;  // the program's result arrays, depth-first
  // Inputs of each stubbed kernel, by kernel name.
  std::map<std::string, std::vector<hlo::Literal>> stubbed_inputs;
};

// Only kUnimplemented kernel errors are stubbed; other errors are returned,
// naming the kernel. Past `deadline` (checked between kernels) the run
// stops with kDeadlineExceeded. `before_kernel`, when set, is called before
// each kernel runs (it may block, e.g. to yield the machine); its error
// ends the run with that error.
Result<StubbedRun> ExecuteWithStubs(const runtime::LoadedProgram& program, std::span<const hlo::Literal> args,
                                    const runtime::EvalOptions& options, uint64_t seed,
                                    std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                                    const std::function<Status()>& before_kernel = nullptr);

// Ok when `candidate` matches `reference` within the default tolerances:
// equal results, and every kernel stubbed in the candidate was stubbed in
// the reference and got equal inputs. kFailedPrecondition names the first
// difference.
Status CompareStubbedRuns(const StubbedRun& reference, const StubbedRun& candidate);

}  // namespace kiln::service
