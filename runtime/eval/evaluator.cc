#include "runtime/eval/evaluator.h"

#include <string>
#include <vector>

#include "runtime/eval/dynamic_shapes.h"
#include "runtime/eval/interpreter.h"
#include "runtime/eval/value.h"

namespace kiln::runtime {

Result<hlo::Literal> EvaluateModule(const hlo::Module& module, std::span<const hlo::Literal> args,
                                    const EvalOptions& options) {
  if (module.entry() == nullptr) {
    return InvalidArgumentError("module " + module.name() + " has no entry computation");
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
  for (size_t i = 0; i < args.size(); ++i) {
    const hlo::Instruction* param =
        static_cast<int64_t>(i) < computation.parameter_count() ? computation.parameters()[i] : nullptr;
    values.push_back(param != nullptr ? ArgumentValue(*args[i], param->shape())
                                      : Value::Borrow(*args[i]));
  }
  KILN_ASSIGN_OR_RETURN(Value result, interpreter.Run(computation, values));
  values.clear();
  return ToResultLiteral(std::move(result));
}

}  // namespace kiln::runtime
