// Quantized ops (quant_lowering.h, op_handlers.h).
#include "compiler/stablehlo/quant_lowering.h"

#include <cmath>

#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

// One parameter per element of `shape`: a scalar broadcast for per-tensor
// quantization, a vector along q.axis for per-axis.
Instruction* Parameters(HloEmitter& emit, const Shape& shape, const QuantInfo& q, PrimitiveType type,
                        const std::vector<double>& values) {
  if (q.axis < 0 || values.size() <= 1) return emit.ConstantLike(Shape(type, shape.dimensions()), values.at(0));
  // One scalar constant per value (ScalarConstant's rounding to `type`),
  // concatenated and broadcast along the quantized dimension.
  std::vector<Instruction*> parts;
  for (double v : values) parts.push_back(emit.Reshape(emit.ScalarConstant(type, v), Shape(type, {1})));
  Instruction* per_axis =
      emit.Add(Opcode::kConcatenate, Shape(type, {static_cast<int64_t>(values.size())}), parts);
  HloEmitter::SetAttr(per_axis, "dimensions", "{0}");
  return emit.Broadcast(per_axis, Shape(type, shape.dimensions()), std::vector<int64_t>{q.axis});
}

std::vector<double> ZeroPoints(const QuantInfo& q) { return {q.zero_points.begin(), q.zero_points.end()}; }

}  // namespace

Instruction* Dequantize(HloEmitter& emit, Instruction* x, const QuantInfo& q) {
  const Shape& shape = x->shape();
  // q - zero_point without overflowing the storage type.
  const PrimitiveType wide = hlo::BitWidth(q.storage) >= 32 ? PrimitiveType::kS64 : PrimitiveType::kS32;
  Instruction* widened = emit.Convert(x, wide);
  Instruction* centered =
      emit.Binary(Opcode::kSubtract, widened, Parameters(emit, shape, q, wide, ZeroPoints(q)));
  Instruction* expressed = emit.Convert(centered, q.expressed);
  return emit.Binary(Opcode::kMultiply, expressed, Parameters(emit, shape, q, q.expressed, q.scales));
}

Instruction* Quantize(HloEmitter& emit, Instruction* x, const QuantInfo& q) {
  Instruction* value = emit.Convert(x, q.expressed);
  const Shape shape(q.expressed, x->shape().dimensions());
  Instruction* scaled = emit.Binary(Opcode::kDivide, value, Parameters(emit, shape, q, q.expressed, q.scales));
  Instruction* shifted =
      emit.Binary(Opcode::kAdd, scaled, Parameters(emit, shape, q, q.expressed, ZeroPoints(q)));
  Instruction* low = emit.ConstantLike(shape, static_cast<double>(q.storage_min));
  Instruction* high = emit.ConstantLike(shape, static_cast<double>(q.storage_max));
  Instruction* clamped = emit.Add(Opcode::kClamp, shape, {low, shifted, high});
  Instruction* rounded = emit.Unary(Opcode::kRoundNearestEven, clamped);
  // NaN becomes 0, as the interpreter's float-to-integer conversion does.
  Instruction* is_nan = emit.Compare(rounded, rounded, "NE");
  Instruction* cleaned = emit.Select(is_nan, emit.ConstantLike(shape, 0), rounded);
  return emit.Convert(cleaned, q.storage);
}

bool UsesStorageValues(std::string_view name) {
  // Ops that move values without reading them as numbers take the storage
  // integers as they are.
  static constexpr std::string_view kStorageOps[] = {
      "func.call", "call", "stablehlo.while", "stablehlo.case", "stablehlo.if", "stablehlo.tuple",
      "stablehlo.get_tuple_element", "stablehlo.optimization_barrier", "stablehlo.bitcast_convert",
      "stablehlo.get_dimension_size", "stablehlo.custom_call", "stablehlo.composite",
      "stablehlo.uniform_quantize", "stablehlo.uniform_dequantize", "stablehlo.constant"};
  for (std::string_view op : kStorageOps) {
    if (op == name) return true;
  }
  return false;
}

bool HasQuantizedTypes(const Converter& c, const Operation& op) {
  if (UsesStorageValues(op.name)) return false;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (c.OperandTypeInfo(op, i).quant >= 0) return true;
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    if (c.ResultTypeInfo(op, i).quant >= 0) return true;
  }
  return false;
}

Status ConvertDequantizeOpQuantize(Converter& c, const Operation& op, OpHandler handler) {
  std::vector<std::pair<ValueId, Instruction*>> stored;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TypeInfo& t = c.OperandTypeInfo(op, i);
    if (t.quant < 0) continue;
    const ValueId v = op.operands[i];
    // An operand read twice (multiply %0, %0) is dequantized once.
    bool seen = false;
    for (const auto& kept : stored) seen |= kept.first == v;
    if (seen) continue;
    stored.emplace_back(v, c.Value(v));
    c.SetValue(v, Dequantize(c.emit(), c.Value(v), c.types().quant(t.quant)));
  }
  Status converted = [&] {
    Converter::ExpressedQuantizedTypes scope(c);
    return handler(c, op);
  }();
  for (const auto& [v, storage] : stored) c.SetValue(v, storage);
  KILN_RETURN_IF_ERROR(converted);
  for (size_t i = 0; i < op.results.size(); ++i) {
    const TypeInfo& t = c.ResultTypeInfo(op, i);
    if (t.quant < 0) continue;
    const ValueId r = op.results[i];
    c.SetValue(r, Quantize(c.emit(), c.Value(r), c.types().quant(t.quant)));
  }
  return Ok();
}

Status ConvertUniformQuantize(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.size() != 1) return c.OpError(op, "expected one operand");
  const TypeInfo& in = c.OperandTypeInfo(op, 0);
  const TypeInfo& out = c.ResultTypeInfo(op, 0);
  if (out.quant < 0) return c.OpError(op, "the result is not of a quantized type");
  Instruction* x = c.Operand(op, 0);
  // Quantized to quantized: requantized through the expressed values.
  if (in.quant >= 0) x = Dequantize(c.emit(), x, c.types().quant(in.quant));
  if (!hlo::IsFloatingPoint(x->shape().element_type())) return c.OpError(op, "expected a float operand");
  return c.SetResults(op, Quantize(c.emit(), x, c.types().quant(out.quant)));
}

Status ConvertUniformDequantize(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.size() != 1) return c.OpError(op, "expected one operand");
  const TypeInfo& in = c.OperandTypeInfo(op, 0);
  if (in.quant < 0) return c.OpError(op, "the operand is not of a quantized type");
  Instruction* x = Dequantize(c.emit(), c.Operand(op, 0), c.types().quant(in.quant));
  return c.SetResults(op, c.emit().Convert(x, c.ResultTypeInfo(op, 0).element));
}

}  // namespace kiln::stablehlo::convert_internal
