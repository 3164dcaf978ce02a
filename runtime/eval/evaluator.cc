#include "runtime/eval/evaluator.h"

#include <string>
#include <vector>

#include "runtime/eval/interpreter.h"
#include "runtime/eval/value.h"

namespace kiln::runtime {

Result<hlo::Literal> EvaluateModule(const hlo::Module& module, std::span<const hlo::Literal> args,
                                    const EvalOptions& options) {
  if (module.entry() == nullptr) {
    return MakeError("module " + module.name() + " has no entry computation");
  }
  std::vector<const hlo::Literal*> pointers;
  pointers.reserve(args.size());
  for (const hlo::Literal& arg : args) pointers.push_back(&arg);
  return EvaluateComputation(*module.entry(), pointers, options);
}

Result<hlo::Literal> EvaluateComputation(const hlo::Computation& computation,
                                         std::span<const hlo::Literal* const> args,
                                         const EvalOptions& options) {
  Interpreter interpreter(options);
  std::vector<Value> values;
  values.reserve(args.size());
  for (const hlo::Literal* arg : args) values.push_back(Value::Borrow(*arg));
  KILN_ASSIGN_OR_RETURN(Value result, interpreter.Run(computation, values));
  values.clear();
  return std::move(result).TakeLiteral();
}

}  // namespace kiln::runtime
