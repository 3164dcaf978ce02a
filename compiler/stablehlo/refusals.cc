#include "compiler/stablehlo/refusals.h"

#include "compiler/hlo/attribute.h"
#include "compiler/stablehlo/dynamic_ops.h"

namespace kiln::stablehlo {
namespace {

// The first dimension of `shape` (or of its tuple elements) that is
// unbounded; -1 when none.
int64_t UnboundedDimension(const hlo::Shape& shape, std::string* where) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      const int64_t d = UnboundedDimension(shape.tuple_shapes(i), where);
      if (d >= 0) return d;
    }
    return -1;
  }
  if (!shape.IsArray()) return -1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.dimensions(i) == hlo::kUnboundedDim) {
      *where = shape.ToString();
      return i;
    }
  }
  return -1;
}

}  // namespace

Status RefuseUncompilable(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return Ok();
  for (const hlo::Instruction* p : entry->parameters()) {
    if (p == nullptr) continue;
    std::string shape;
    const int64_t d = UnboundedDimension(p->shape(), &shape);
    if (d >= 0) {
      return InvalidArgumentError("dimension " + std::to_string(d) + " of parameter " +
                                  std::to_string(p->parameter_number()) + " (" + shape +
                                  ") is dynamic: give the arguments' concrete shapes (kiln's --arg-shapes or a run's "
                                  "inputs; arg_shapes in the HTTP API) to refine it")
          .WithReason("dynamic_dimension");
    }
  }
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == hlo::Opcode::kCustomCall) {
        const std::pmr::string* target = instr->AttributeText("custom_call_target");
        if (target != nullptr && target->starts_with("\"stablehlo.")) {
          std::string reason;
          if (const std::pmr::string* metadata = instr->AttributeText("metadata")) reason = *metadata;
          std::string name(target->substr(1, target->size() - 2));
          if (IsDynamicShapeTarget(name)) {
            return InvalidArgumentError("op " + name + " (instruction %" + std::string(instr->name()) + " in %" +
                                        computation->name() +
                                        ") has shape operands not known before running: give the inputs' "
                                        "concrete shapes and the dimension arguments' values to refine it")
                .WithReason("dynamic_dimension");
          }
          return UnimplementedError(name == kOpaqueFunctionTarget
                                        ? "a function cannot be compiled: " + reason
                                        : "op " + name + " has no HLO counterpart kiln compiles (instruction %" +
                                              std::string(instr->name()) + ")")
              .WithReason("unsupported_stablehlo");
        }
      }
      std::string shape;
      const int64_t d = UnboundedDimension(instr->shape(), &shape);
      if (d >= 0) {
        return InvalidArgumentError("dimension " + std::to_string(d) + " of %" + std::string(instr->name()) + " (" +
                                    shape + ") in %" + computation->name() +
                                    " is dynamic: give the inputs' concrete shapes to refine it")
            .WithReason("dynamic_dimension");
      }
    }
  }
  return Ok();
}

}  // namespace kiln::stablehlo
