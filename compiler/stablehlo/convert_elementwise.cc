// Elementwise ops, constants and iota (op_handlers.h).
#include <array>
#include <cmath>
#include <limits>

#include "compiler/hlo/float_formats.h"

#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

struct ElementwiseOp {
  std::string_view name;
  Opcode opcode;
};

constexpr std::array<ElementwiseOp, 41> kElementwise = {{
    {"abs", Opcode::kAbs}, {"add", Opcode::kAdd}, {"and", Opcode::kAnd}, {"atan2", Opcode::kAtan2},
    {"cbrt", Opcode::kCbrt}, {"ceil", Opcode::kCeil}, {"complex", Opcode::kComplex}, {"cosine", Opcode::kCos},
    {"count_leading_zeros", Opcode::kClz}, {"divide", Opcode::kDivide}, {"exponential", Opcode::kExp},
    {"exponential_minus_one", Opcode::kExpm1}, {"floor", Opcode::kFloor}, {"imag", Opcode::kImag},
    {"is_finite", Opcode::kIsFinite}, {"log", Opcode::kLog}, {"log_plus_one", Opcode::kLog1p},
    {"logistic", Opcode::kLogistic}, {"maximum", Opcode::kMaximum}, {"minimum", Opcode::kMinimum},
    {"multiply", Opcode::kMultiply}, {"negate", Opcode::kNegate}, {"not", Opcode::kNot}, {"or", Opcode::kOr},
    {"popcnt", Opcode::kPopulationCount}, {"power", Opcode::kPower}, {"real", Opcode::kReal},
    {"remainder", Opcode::kRemainder}, {"round_nearest_afz", Opcode::kRoundNearestAfz},
    {"round_nearest_even", Opcode::kRoundNearestEven}, {"rsqrt", Opcode::kRsqrt},
    {"shift_left", Opcode::kShiftLeft}, {"shift_right_arithmetic", Opcode::kShiftRightArithmetic},
    {"shift_right_logical", Opcode::kShiftRightLogical}, {"sign", Opcode::kSign}, {"sine", Opcode::kSin},
    {"sqrt", Opcode::kSqrt}, {"subtract", Opcode::kSubtract}, {"tan", Opcode::kTan}, {"tanh", Opcode::kTanh},
    {"xor", Opcode::kXor},
}};


// Splats of up to this many bytes become whole constants (as XLA writes
// them); larger ones a broadcast scalar, so no input makes us allocate more
// than its text or bytes say.
constexpr int64_t kMaxSplatBytes = int64_t{16} << 20;

// HLO text keeps no NaN payloads of narrow floats (it writes `nan` and
// `-nan`): such NaNs become the quiet NaN of their sign, so that a printed
// and re-parsed module has the same constants.
void CanonicalizeNarrowNans(hlo::Literal& lit) {
  const hlo::FloatFormat* f = hlo::NarrowFloatFormat(lit.shape().element_type());
  if (f == nullptr || f->nan == hlo::FloatFormat::Nan::kNone) return;
  const int width = hlo::HostByteWidth(lit.shape().element_type());
  const int64_t n = lit.element_count();
  auto canonical = [&](bool negative) {
    const double nan = negative ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
    return hlo::EncodeNarrowFloat(*f, f->total_bits == 16 ? static_cast<double>(static_cast<float>(nan)) : nan);
  };
  const uint32_t positive = canonical(false);
  const uint32_t negative = canonical(true);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = width == 2 ? lit.Get<uint16_t>(i) : lit.Get<uint8_t>(i);
    const double v = hlo::DecodeNarrowFloat(*f, bits);
    if (!std::isnan(v)) continue;
    const uint32_t want = std::signbit(v) && f->has_sign ? negative : positive;
    if (width == 2) {
      lit.Set<uint16_t>(i, static_cast<uint16_t>(want));
    } else {
      lit.Set<uint8_t>(i, static_cast<uint8_t>(want));
    }
  }
}

}  // namespace

// The default comparison type of an element type, which HLO text leaves out.
std::string_view DefaultCompareType(PrimitiveType t) {
  if (hlo::IsFloatingPoint(t) || hlo::IsComplex(t)) return "FLOAT";
  if (hlo::IsSignedInteger(t)) return "SIGNED";
  return "UNSIGNED";
}

Status ConvertElementwise(Converter& c, const Operation& op) {
  const std::string_view name = OpShortName(op.name);
  const ElementwiseOp* found = nullptr;
  for (const ElementwiseOp& e : kElementwise) {
    if (e.name == name) found = &e;
  }
  if (found == nullptr) return c.Unsupported(op, "op is not supported");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  std::vector<Instruction*> operands = c.Operands(op);
  if (operands.empty() || operands.size() > 2) return c.OpError(op, "expected one or two operands");
  return c.SetResults(op, c.emit().Add(found->opcode, std::move(shape), operands));
}

Status ConvertCompare(Converter& c, const Operation& op) {
  if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
  std::string_view direction = EnumAttrValue(op, "comparison_direction");
  if (direction.empty()) return c.OpError(op, "missing comparison_direction");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* a = c.Operand(op, 0);
  const PrimitiveType element = a->shape().element_type();
  std::string_view type = EnumAttrValue(op, "compare_type");
  const bool is_float = hlo::IsFloatingPoint(element) || hlo::IsComplex(element);
  const bool explicit_type = !type.empty() && type != "NOTYPE" && type != DefaultCompareType(element);
  // HLO accepts TOTALORDER beside the default; any other type contradicts
  // the operands (SIGNED on f32), which HLO's verifier would refuse.
  if (explicit_type && !(is_float && type == "TOTALORDER")) {
    return c.OpError(op, "compare_type " + std::string(type) + " does not fit operands of type " +
                             std::string(hlo::PrimitiveTypeName(element)));
  }
  Instruction* cmp = c.emit().Add(Opcode::kCompare, std::move(shape), {a, c.Operand(op, 1)});
  HloEmitter::SetAttr(cmp, "direction", direction);
  if (explicit_type) HloEmitter::SetAttr(cmp, "type", type);
  return c.SetResults(op, cmp);
}

// A scalar operand broadcast to `shape`'s dimensions (its own element type).
Instruction* BroadcastScalarTo(HloEmitter& emit, Instruction* x, const Shape& shape) {
  if (x->shape().rank() != 0 || shape.rank() == 0) return x;
  return emit.Broadcast(x, shape, {});
}

Status ConvertSelect(Converter& c, const Operation& op) {
  if (op.operands.size() != 3) return c.OpError(op, "expected three operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* pred = BroadcastScalarTo(c.emit(), c.Operand(op, 0), shape);
  return c.SetResults(op, c.emit().Add(Opcode::kSelect, std::move(shape), {pred, c.Operand(op, 1), c.Operand(op, 2)}));
}

Status ConvertClamp(Converter& c, const Operation& op) {
  if (op.operands.size() != 3) return c.OpError(op, "expected three operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* lo = BroadcastScalarTo(c.emit(), c.Operand(op, 0), shape);
  Instruction* hi = BroadcastScalarTo(c.emit(), c.Operand(op, 2), shape);
  return c.SetResults(op, c.emit().Add(Opcode::kClamp, std::move(shape), {lo, c.Operand(op, 1), hi}));
}

Status ConvertConvert(Converter& c, const Operation& op) {
  if (op.operands.size() != 1) return c.OpError(op, "expected one operand");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* x = c.Operand(op, 0);
  // Complex to real keeps the real part, as XLA's ConvertElementType does.
  if (hlo::IsComplex(x->shape().element_type()) && !hlo::IsComplex(shape.element_type())) {
    x = c.emit().Unary(Opcode::kReal, x);
  }
  if (x->shape().element_type() == shape.element_type()) return c.SetResults(op, x);
  return c.SetResults(op, c.emit().Add(Opcode::kConvert, std::move(shape), {x}));
}

Status ConvertBitcastConvert(Converter& c, const Operation& op) {
  if (op.operands.size() != 1) return c.OpError(op, "expected one operand");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  return c.SetResults(op, c.emit().Add(Opcode::kBitcastConvert, std::move(shape), {c.Operand(op, 0)}));
}

Status ConvertReducePrecision(Converter& c, const Operation& op) {
  if (op.operands.size() != 1) return c.OpError(op, "expected one operand");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t e, IntAttrValue(c, op, "exponent_bits"));
  KILN_ASSIGN_OR_RETURN(int64_t m, IntAttrValue(c, op, "mantissa_bits"));
  if (e < 1 || e > 64 || m < 0 || m > 64) return c.OpError(op, "bad exponent or mantissa bits");
  Instruction* r = c.emit().Add(Opcode::kReducePrecision, std::move(shape), {c.Operand(op, 0)});
  HloEmitter::SetAttr(r, "exponent_bits", std::to_string(e));
  HloEmitter::SetAttr(r, "mantissa_bits", std::to_string(m));
  return c.SetResults(op, r);
}

Result<Instruction*> EmitDenseConstant(Converter& c, const Operation& op, const Attr* value, const Shape& shape) {
  if (value == nullptr || value->kind != Attr::Kind::kDense || value->literal == nullptr) {
    return c.Unsupported(op, "only dense constants are supported");
  }
  if (!shape.IsArray() || !shape.is_static()) return c.OpError(op, "a constant needs a static shape");
  hlo::Literal lit = *value->literal;
  CanonicalizeNarrowNans(lit);
  if (lit.shape().element_type() != shape.element_type()) {
    return c.OpError(op, "the constant's value and result types differ");
  }
  if (!value->splat) {
    if (lit.shape().dimensions() != shape.dimensions()) return c.OpError(op, "the constant's value and result shapes differ");
    return c.emit().Constant(std::move(lit));
  }
  const int64_t count = shape.ElementCount();
  const int64_t bytes = count * hlo::HostByteWidth(shape.element_type());
  if (shape.rank() == 0) return c.emit().Constant(std::move(lit));
  if (count < 0 || bytes > kMaxSplatBytes) return c.emit().Broadcast(c.emit().Constant(std::move(lit)), shape, {});
  return c.emit().Constant(hlo::Literal::Splat(shape, lit));
}

Status ConvertConstant(Converter& c, const Operation& op) {
  KILN_ASSIGN_OR_RETURN(const Attr* value, RequiredAttr(c, op, "value"));
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(Instruction * constant, EmitDenseConstant(c, op, value, shape));
  return c.SetResults(op, constant);
}

Status ConvertIota(Converter& c, const Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(int64_t dim, IntAttrValue(c, op, "iota_dimension"));
  if (dim < 0 || dim >= shape.rank()) return c.OpError(op, "iota_dimension out of range");
  Instruction* iota = c.emit().Add(Opcode::kIota, std::move(shape), {});
  HloEmitter::SetAttr(iota, "iota_dimension", std::to_string(dim));
  return c.SetResults(op, iota);
}

}  // namespace kiln::stablehlo::convert_internal
