// CHLO ops (op_handlers.h): broadcasting binary ops as explicit broadcasts
// and the plain op, constants, predicates, top_k as iota + sort + slices, and
// the math functions through chlo_math.h, computed in f32 for f16/bf16
// where the legalization upcasts.
#include "compiler/stablehlo/chlo_math.h"
#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

struct BroadcastOp {
  std::string_view name;
  Opcode opcode;
};

constexpr BroadcastOp kBroadcastOps[] = {
    {"broadcast_add", Opcode::kAdd},        {"broadcast_and", Opcode::kAnd},
    {"broadcast_atan2", Opcode::kAtan2},    {"broadcast_complex", Opcode::kComplex},
    {"broadcast_divide", Opcode::kDivide},  {"broadcast_maximum", Opcode::kMaximum},
    {"broadcast_minimum", Opcode::kMinimum}, {"broadcast_multiply", Opcode::kMultiply},
    {"broadcast_or", Opcode::kOr},          {"broadcast_power", Opcode::kPower},
    {"broadcast_remainder", Opcode::kRemainder}, {"broadcast_shift_left", Opcode::kShiftLeft},
    {"broadcast_shift_right_arithmetic", Opcode::kShiftRightArithmetic},
    {"broadcast_shift_right_logical", Opcode::kShiftRightLogical},
    {"broadcast_subtract", Opcode::kSubtract}, {"broadcast_xor", Opcode::kXor},
    {"broadcast_compare", Opcode::kCompare},
};

// `x` broadcast to `dims` (numpy style, or along `mapping` when given).
Result<Instruction*> BroadcastTo(Converter& c, const Operation& op, Instruction* x, const std::vector<int64_t>& dims,
                                 std::vector<int64_t> mapping) {
  const Shape& in = x->shape();
  if (in.dimensions() == dims) return x;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (mapping.empty()) {
    for (int64_t i = 0; i < in.rank(); ++i) mapping.push_back(rank - in.rank() + i);
  }
  if (static_cast<int64_t>(mapping.size()) != in.rank()) return c.OpError(op, "bad broadcast_dimensions");
  std::vector<int64_t> kept_dims, kept_sizes;
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t d = mapping[i];
    if (d < 0 || d >= rank) return c.OpError(op, "bad broadcast_dimensions");
    if (in.dimensions(i) == 1 && dims[d] != 1) continue;
    if (in.dimensions(i) != dims[d]) return c.OpError(op, "operands do not broadcast");
    kept_dims.push_back(d);
    kept_sizes.push_back(in.dimensions(i));
  }
  if (static_cast<int64_t>(kept_dims.size()) != in.rank()) {
    x = c.emit().Reshape(x, Shape(in.element_type(), kept_sizes));
  }
  return c.emit().Broadcast(x, Shape(in.element_type(), dims), kept_dims);
}

Status ConvertBroadcasting(Converter& c, const Operation& op, Opcode opcode) {
  if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  std::vector<int64_t> mapping = IntListOf(c.types(), op.FindAttr("broadcast_dimensions"));
  Instruction* a = c.Operand(op, 0);
  Instruction* b = c.Operand(op, 1);
  const bool a_low = a->shape().rank() < b->shape().rank();
  KILN_ASSIGN_OR_RETURN(a, BroadcastTo(c, op, a, shape.dimensions(), a_low ? mapping : std::vector<int64_t>{}));
  KILN_ASSIGN_OR_RETURN(b, BroadcastTo(c, op, b, shape.dimensions(), a_low ? std::vector<int64_t>{} : mapping));
  Instruction* r = c.emit().Add(opcode, std::move(shape), {a, b});
  if (opcode == Opcode::kCompare) {
    std::string_view direction = EnumAttrValue(op, "comparison_direction");
    if (direction.empty()) return c.OpError(op, "missing comparison_direction");
    HloEmitter::SetAttr(r, "direction", direction);
    std::string_view type = EnumAttrValue(op, "compare_type");
    if (type == "TOTALORDER") HloEmitter::SetAttr(r, "type", type);
  }
  return c.SetResults(op, r);
}

// f16/bf16 computed in f32, as materializeWithUpcast does.
template <typename Fn>
Instruction* WithUpcast(HloEmitter& emit, Instruction* x, Fn fn) {
  const PrimitiveType t = x->shape().element_type();
  const bool upcast = t == PrimitiveType::kF16 || t == PrimitiveType::kBF16;
  Instruction* in = upcast ? emit.Convert(x, PrimitiveType::kF32) : x;
  ExprBuilder m(emit, in->shape());
  Instruction* out = fn(m, in);
  return upcast ? emit.Convert(out, t) : out;
}

Status ConvertTopK(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.size() != 2) return c.OpError(op, "expected one operand, two results");
  KILN_ASSIGN_OR_RETURN(int64_t k, IntAttrValue(c, op, "k"));
  Instruction* x = c.Operand(op, 0);
  const Shape& in = x->shape();
  if (in.rank() < 1 || !in.is_static()) return c.OpError(op, "top_k needs a static operand of rank >= 1");
  const int64_t last = in.rank() - 1;
  const int64_t kept = std::min(k, in.dimensions(last));
  if (k < 0) return c.OpError(op, "k must not be negative");
  Shape index_shape(PrimitiveType::kS32, in.dimensions());
  Instruction* iota = c.emit().Add(Opcode::kIota, index_shape, {});
  HloEmitter::SetAttr(iota, "iota_dimension", std::to_string(last));
  // The comparator: values greater first (total order for floats).
  auto comparator = std::make_unique<hlo::Computation>(c.emit().names()->Next("top_k_compare"));
  c.PushEmitter(comparator.get());
  Shape scalar(in.element_type(), {});
  Shape index_scalar(PrimitiveType::kS32, {});
  Instruction* lhs = c.emit().Parameter(0, scalar, "lhs");
  Instruction* rhs = c.emit().Parameter(1, scalar, "rhs");
  c.emit().Parameter(2, index_scalar, "lhs_index");
  c.emit().Parameter(3, index_scalar, "rhs_index");
  const bool is_float = hlo::IsFloatingPoint(in.element_type());
  comparator->set_root(c.emit().Compare(lhs, rhs, "GT", is_float ? "TOTALORDER" : ""));
  c.PopEmitter();
  hlo::Computation* compare = c.AddComputation(std::move(comparator));
  Instruction* sort = c.emit().Add(Opcode::kSort, Shape::Tuple({in, index_shape}), {x, iota}, "sort");
  HloEmitter::SetAttr(sort, "dimensions", "{" + std::to_string(last) + "}");
  HloEmitter::SetAttr(sort, "is_stable", "true");
  sort->AddAttribute(hlo::Attribute::Calls("to_apply", compare));
  std::string slice = "{";
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d > 0) slice += ',';
    slice += "[0:" + std::to_string(d == last ? kept : in.dimensions(d)) + "]";
  }
  slice += "}";
  std::vector<int64_t> out_dims = in.dimensions();
  out_dims[last] = kept;
  for (int i = 0; i < 2; ++i) {
    Instruction* sorted = c.emit().GetTupleElement(sort, i);
    Instruction* s = c.emit().Add(Opcode::kSlice, Shape(sorted->shape().element_type(), out_dims), {sorted}, "slice");
    HloEmitter::SetAttr(s, "slice", slice);
    Instruction* result = s;
    KILN_ASSIGN_OR_RETURN(Shape want, c.ResultShape(op, i));
    if (want.element_type() != s->shape().element_type()) result = c.emit().Convert(s, want.element_type());
    c.SetValue(op.results[i], result);
  }
  return Ok();
}

}  // namespace

Status ConvertChlo(Converter& c, const Operation& op) {
  const std::string_view name = op.name.substr(5);
  for (const BroadcastOp& b : kBroadcastOps) {
    if (b.name == name) return ConvertBroadcasting(c, op, b.opcode);
  }
  if (name == "top_k") return ConvertTopK(c, op);
  if (name == "constant") return ConvertConstant(c, op);
  HloEmitter& emit = c.emit();
  if (name == "constant_like") {
    const Attr* value = op.FindAttr("value");
    if (value == nullptr || op.operands.size() != 1) return c.OpError(op, "expected a value and an operand");
    KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
    const double v = value->kind == Attr::Kind::kFloat ? value->f
                     : value->kind == Attr::Kind::kInt ? static_cast<double>(value->i)
                     : value->kind == Attr::Kind::kBool ? (value->b ? 1 : 0)
                                                        : 0;
    return c.SetResults(op, emit.ConstantLike(shape, v));
  }
  if (op.operands.empty()) return c.Unsupported(op, "chlo op is not supported");
  Instruction* x = c.Operand(op, 0);
  if (name == "next_after") {
    if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
    ExprBuilder m(emit, x->shape());
    return c.SetResults(op, chlo::NextAfter(m, x, c.Operand(op, 1)));
  }
  if (op.operands.size() != 1) return c.Unsupported(op, "chlo op is not supported");
  const PrimitiveType t = x->shape().element_type();
  if (!hlo::IsFloatingPoint(t) && !hlo::IsComplex(t)) return c.OpError(op, "expects a floating-point operand");
  ExprBuilder m(emit, x->shape());
  if (name == "is_inf" || name == "is_pos_inf" || name == "is_neg_inf") {
    Instruction* v = name == "is_inf" ? m.Abs(x) : x;
    return c.SetResults(op, m.Eq(v, m.Inf(name == "is_neg_inf")));
  }
  if (name == "conj") {
    ExprBuilder r(emit, c.emit().Unary(Opcode::kReal, x)->shape());
    return c.SetResults(op, r.Complex(r.Real(x), r.Neg(r.Imag(x))));
  }
  using Fn = hlo::Instruction* (*)(ExprBuilder&, hlo::Instruction*);
  struct MathFn {
    std::string_view name;
    Fn fn;
    bool upcast;
    bool complex_ok;
  };
  static constexpr MathFn kMath[] = {
      {"acos", chlo::Acos, false, true},   {"acosh", chlo::Acosh, false, true},
      {"asin", chlo::Asin, false, true},   {"asinh", chlo::Asinh, false, true},
      {"atan", chlo::Atan, false, true},   {"atanh", chlo::Atanh, false, true},
      {"tan", chlo::Tan, false, true},     {"cosh", chlo::Cosh, true, true},
      {"sinh", chlo::Sinh, true, true},    {"erf", chlo::Erf, true, false},
      {"erfc", chlo::Erfc, true, false},   {"erf_inv", chlo::ErfInv, true, false},
      {"lgamma", chlo::Lgamma, true, false}, {"digamma", chlo::Digamma, true, false},
      {"bessel_i1e", chlo::BesselI1e, true, false},
  };
  for (const MathFn& f : kMath) {
    if (f.name != name) continue;
    if (hlo::IsComplex(t) && !f.complex_ok) return c.Unsupported(op, "complex operands are not supported");
    Instruction* result = f.upcast ? WithUpcast(emit, x, f.fn) : f.fn(m, x);
    return c.SetResults(op, result);
  }
  return c.Unsupported(op, "chlo op is not supported");
}

}  // namespace kiln::stablehlo::convert_internal
