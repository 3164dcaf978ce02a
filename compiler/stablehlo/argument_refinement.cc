#include "compiler/stablehlo/argument_refinement.h"

#include <cstring>

#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/shape_refinement.h"

namespace kiln::stablehlo {
namespace {

bool IsIntegerScalar(const hlo::Shape& shape) {
  return shape.IsArray() && shape.rank() == 0 && hlo::IsInteger(shape.element_type());
}

// The one size given to every dynamic dimension of the parameters, if they
// were all given the same.
std::optional<int64_t> CommonDynamicSize(const hlo::Computation& entry, const std::vector<hlo::Shape>& shapes) {
  std::optional<int64_t> size;
  for (const hlo::Instruction* p : entry.parameters()) {
    const size_t n = static_cast<size_t>(p->parameter_number());
    if (n >= shapes.size() || !p->shape().IsArray() || !shapes[n].IsArray()) continue;
    if (p->shape().rank() != shapes[n].rank()) continue;
    for (int64_t d = 0; d < p->shape().rank(); ++d) {
      if (!p->shape().is_dynamic_dimension(d)) continue;
      const int64_t given = shapes[n].dimensions(d);
      if (size && *size != given) return std::nullopt;
      size = given;
    }
  }
  return size;
}

}  // namespace

Result<DimensionArguments> RefineFromArguments(hlo::Module& module, const std::vector<hlo::Shape>& arg_shapes,
                                               const std::vector<hlo::Literal>& input_arguments) {
  DimensionArguments dims;
  if (module.entry() != nullptr && NeedsRefinement(module)) {
    RefineOptions refine;
    refine.parameter_shapes = arg_shapes;
    if (arg_shapes.empty()) {
      for (const hlo::Literal& arg : input_arguments) refine.parameter_shapes.push_back(arg.shape());
    }
    const hlo::Computation& entry = *module.entry();
    const std::optional<int64_t> common = CommonDynamicSize(entry, refine.parameter_shapes);
    dims.values.resize(entry.parameters().size());
    refine.parameter_values.resize(entry.parameters().size());
    for (const hlo::Instruction* p : entry.parameters()) {
      const size_t n = static_cast<size_t>(p->parameter_number());
      if (n >= refine.parameter_values.size()) continue;
      if (!IsIntegerScalar(p->shape())) break;  // dimension arguments lead
      if (n < input_arguments.size() && IsIntegerScalar(input_arguments[n].shape())) {
        refine.parameter_values[n] = static_cast<int64_t>(input_arguments[n].GetAsDouble(0));
      } else if (common) {
        refine.parameter_values[n] = *common;
        dims.values[n] = *common;
      }
    }
    if (!refine.parameter_shapes.empty()) {
      Status refined = RefineShapes(module, refine);
      if (!refined) return refined.error().WithContext("refining the dynamic shapes");
      Status verified = hlo::VerifyModule(module);
      if (!verified) return verified.error().WithContext("refined module");
    }
  }
  return dims;
}

void ApplyDimensionArguments(const DimensionArguments& dims, std::vector<hlo::Literal>& args) {
  for (size_t n = 0; n < dims.values.size() && n < args.size(); ++n) {
    if (!dims.values[n] || !IsIntegerScalar(args[n].shape())) continue;
    hlo::Literal value(args[n].shape());
    const int64_t v = *dims.values[n];
    const int width = hlo::HostByteWidth(value.shape().element_type());
    std::memcpy(value.mutable_data().data(), &v, static_cast<size_t>(width));  // little-endian low bytes
    args[n] = std::move(value);
  }
}

}  // namespace kiln::stablehlo
