// Dynamic-shape ops (op_handlers.h). An op whose result type is static and
// says all the shape operand would (broadcast, reshape, iota) becomes its
// static op here, as StableHLO's canonicalization does; every other one is
// the custom call of dynamic_ops.h that shape refinement makes static.
#include "compiler/stablehlo/attr_printer.h"
#include "compiler/stablehlo/op_handlers.h"
#include "compiler/stablehlo/window_text.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

struct DynamicOp {
  std::string_view name;
  std::string_view target;
  size_t operands;
};

constexpr DynamicOp kDynamicOps[] = {
    {"dynamic_broadcast_in_dim", kDynamicBroadcastInDimTarget, 2},
    {"dynamic_reshape", kDynamicReshapeTarget, 2},
    {"dynamic_iota", kDynamicIotaTarget, 1},
    {"real_dynamic_slice", kRealDynamicSliceTarget, 4},
    {"dynamic_pad", kDynamicPadTarget, 5},
    {"dynamic_gather", kDynamicGatherTarget, 3},
    {"dynamic_conv", kDynamicConvTarget, 3},
};

bool IsStatic(const Shape& shape) {
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.is_dynamic_dimension(i)) return false;
  }
  return true;
}

Result<ConfigPairs> ConvolutionConfig(const Converter& c, const Operation& op) {
  KILN_ASSIGN_OR_RETURN(ConvolutionAttributes a, ReadConvolutionAttributes(c, op));
  FillWindowDefaults(a.window);
  ConfigPairs out = {{"window_sizes", IntListText(a.window.sizes)},
                     {"window_strides", IntListText(a.window.strides)},
                     {"lhs_dilation", IntListText(a.window.lhs_dilation)},
                     {"rhs_dilation", IntListText(a.window.rhs_dilation)},
                     {"window_reversal", IntListText(a.window.reversal)},
                     {"dim_labels", a.dim_labels}};
  if (a.feature_group_count != 1) out.emplace_back("feature_group_count", std::to_string(a.feature_group_count));
  if (a.batch_group_count != 1) out.emplace_back("batch_group_count", std::to_string(a.batch_group_count));
  if (!a.precision.empty()) out.emplace_back("operand_precision", a.precision);
  return out;
}

}  // namespace

Status ConvertDynamicOp(Converter& c, const Operation& op) {
  const std::string_view name = OpShortName(op.name);
  const DynamicOp* found = nullptr;
  for (const DynamicOp& d : kDynamicOps) {
    if (d.name == name) found = &d;
  }
  if (found == nullptr) return c.Unsupported(op, "op is not supported");
  if (op.operands.size() != found->operands) {
    return c.OpError(op, "expected " + std::to_string(found->operands) + " operands");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  const bool result_static = IsStatic(shape);
  ConfigPairs config;
  if (name == "dynamic_broadcast_in_dim") {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntListAttr(c, op, "broadcast_dimensions"));
    Instruction* x = c.Operand(op, 0);
    if (result_static && IsStatic(x->shape())) {
      Result<Instruction*> b = c.emit().BroadcastInDim(x, shape, dims);
      if (!b) return c.OpError(op, b.error().message);
      return c.SetResults(op, *b);
    }
    config.emplace_back("dimensions", IntListText(dims));
  } else if (name == "dynamic_reshape") {
    if (result_static && IsStatic(c.Operand(op, 0)->shape())) {
      return c.SetResults(op, c.emit().Reshape(c.Operand(op, 0), shape));
    }
  } else if (name == "dynamic_iota") {
    KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "iota_dimension"));
    if (dim < 0 || dim >= shape.rank()) return c.OpError(op, "iota_dimension out of range");
    if (result_static) {
      Instruction* iota = c.emit().Add(Opcode::kIota, std::move(shape), {});
      HloEmitter::SetAttr(iota, "iota_dimension", std::to_string(dim));
      return c.SetResults(op, iota);
    }
    config.emplace_back("iota_dimension", std::to_string(dim));
  } else if (name == "dynamic_gather") {
    KILN_ASSIGN_OR_RETURN(config, GatherAttributes(c, op));
  } else if (name == "dynamic_conv") {
    KILN_ASSIGN_OR_RETURN(config, ConvolutionConfig(c, op));
  }
  Instruction* call = c.emit().Add(Opcode::kCustomCall, std::move(shape), c.Operands(op), "custom-call");
  HloEmitter::SetAttr(call, "custom_call_target", QuotedHloString(found->target));
  if (!config.empty()) HloEmitter::SetRawAttr(call, "backend_config", QuotedHloString(ConfigPairsText(config)));
  return c.SetResults(op, call);
}

}  // namespace kiln::stablehlo::convert_internal
