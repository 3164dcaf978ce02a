#include "compiler/stablehlo/hlo_emitter.h"

#include <cmath>
#include <cstring>

#include "compiler/hlo/attribute.h"
#include "compiler/stablehlo/dense_elements.h"

namespace kiln::stablehlo {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

std::string NameGen::Sanitized(std::string_view base) {
  std::string name;
  name.reserve(base.size() + 8);
  for (char c : base) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    name.push_back(ok ? c : '_');
  }
  if (name.empty() || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_')) {
    name.insert(name.begin(), '_');
  }
  return name;
}

std::string NameGen::Next(std::string_view base) {
  std::string name = Sanitized(base);
  name += '.';
  name += std::to_string(++counter_);
  return name;
}

std::string IntListText(std::span<const int64_t> values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
  return out;
}

Instruction* HloEmitter::Add(Opcode opcode, Shape shape, std::span<Instruction* const> operands,
                             std::string_view name) {
  const std::string unique = names_->Next(name.empty() ? hlo::OpcodeName(opcode) : name);
  hlo::InstructionPtr instr = Instruction::Create(opcode, std::move(shape), operands, unique, module_->arena());
  return computation_->AddInstruction(std::move(instr));
}

Instruction* HloEmitter::Parameter(int64_t number, Shape shape, std::string_view name) {
  const std::string unique = names_->Next(name.empty() ? std::string_view("param") : name);
  return computation_->AddInstruction(Instruction::CreateParameter(number, std::move(shape), unique, module_->arena()));
}

Instruction* HloEmitter::Constant(hlo::Literal literal, std::string_view name) {
  const std::string unique = names_->Next(name.empty() ? std::string_view("constant") : name);
  return computation_->AddInstruction(Instruction::CreateConstant(std::move(literal), unique, module_->arena()));
}

Instruction* HloEmitter::ScalarConstant(PrimitiveType type, double value) {
  hlo::Literal lit(Shape(type, {}));
  WrittenValue v;
  if (hlo::IsFloatingPoint(type) || hlo::IsComplex(type)) {
    v.is_float = true;
    v.f = value;
  } else if (type == PrimitiveType::kPred) {
    v.u = value != 0 ? 1 : 0;
  } else {
    // Truncated toward zero, saturating at the 64-bit range (NaN is 0).
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::isnan(value)) {
      v.u = 0;
    } else if (value >= kTwo63) {
      v.u = hlo::IsUnsignedInteger(type) && value < 2 * kTwo63 ? static_cast<uint64_t>(value)
            : hlo::IsUnsignedInteger(type)                      ? UINT64_MAX
                                                                : static_cast<uint64_t>(INT64_MAX);
    } else if (value < -kTwo63) {
      v.u = static_cast<uint64_t>(INT64_MIN);
    } else {
      v.u = static_cast<uint64_t>(static_cast<int64_t>(value));
    }
  }
  (void)SetLiteralElement(lit, 0, v);
  return Constant(std::move(lit));
}

Instruction* HloEmitter::ConstantLike(const Shape& shape, double value) {
  Instruction* c = ScalarConstant(shape.element_type(), value);
  if (shape.rank() == 0) return c;
  return Broadcast(c, shape, {});
}

Instruction* HloEmitter::ConstantBitsLike(const Shape& shape, uint64_t bits) {
  hlo::Literal lit(Shape(shape.element_type(), {}));
  const int bytes = hlo::HostByteWidth(shape.element_type());
  std::memcpy(lit.mutable_data().data(), &bits, static_cast<size_t>(bytes));
  Instruction* c = Constant(std::move(lit));
  if (shape.rank() == 0) return c;
  return Broadcast(c, shape, {});
}

Instruction* HloEmitter::Broadcast(Instruction* operand, const Shape& shape, std::span<const int64_t> dimensions) {
  Shape result = shape;
  result.set_element_type(operand->shape().element_type());
  Instruction* b = Add(Opcode::kBroadcast, std::move(result), {operand});
  SetAttr(b, "dimensions", IntListText(dimensions));
  return b;
}

Result<Instruction*> HloEmitter::BroadcastInDim(Instruction* operand, const Shape& shape,
                                                std::span<const int64_t> dimensions) {
  const Shape& in = operand->shape();
  if (static_cast<int64_t>(dimensions.size()) != in.rank()) {
    return InvalidArgumentError("broadcast_dimensions do not fit the operand's rank");
  }
  std::vector<bool> seen(static_cast<size_t>(shape.rank()), false);
  std::vector<int64_t> kept_dims, kept_sizes;
  bool collapse = false;
  for (size_t i = 0; i < dimensions.size(); ++i) {
    const int64_t to_dim = dimensions[i];
    if (to_dim < 0 || to_dim >= shape.rank() || seen[to_dim]) {
      return InvalidArgumentError("broadcast_dimensions do not fit the result's rank");
    }
    seen[to_dim] = true;
    const int64_t from = in.dimensions(static_cast<int64_t>(i));
    const int64_t to = shape.dimensions(to_dim);
    if (from == 1 && to != 1) {
      collapse = true;
      continue;
    }
    if (from != to && from != hlo::kUnboundedDim && to != hlo::kUnboundedDim) {
      return InvalidArgumentError("operand dimension " + std::to_string(i) + " of size " + std::to_string(from) +
                                  " cannot broadcast to " + std::to_string(to));
    }
    kept_dims.push_back(to_dim);
    kept_sizes.push_back(from);
  }
  Instruction* x = operand;
  if (collapse) x = Reshape(x, Shape(in.element_type(), kept_sizes));
  Shape result = shape;
  result.set_element_type(in.element_type());
  Instruction* b = Add(Opcode::kBroadcast, std::move(result), {x});
  SetAttr(b, "dimensions", IntListText(kept_dims));
  return b;
}

Instruction* HloEmitter::Reshape(Instruction* operand, const Shape& shape) {
  Shape result(operand->shape().element_type(), shape.dimensions());
  return Add(Opcode::kReshape, std::move(result), {operand});
}

Instruction* HloEmitter::Convert(Instruction* operand, PrimitiveType type) {
  if (operand->shape().element_type() == type) return operand;
  Shape result = operand->shape();
  result.set_element_type(type);
  return Add(Opcode::kConvert, std::move(result), {operand});
}

Instruction* HloEmitter::GetTupleElement(Instruction* tuple, int64_t index) {
  Instruction* gte = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes(index), {tuple});
  SetAttr(gte, "index", std::to_string(index));
  return gte;
}

Instruction* HloEmitter::Tuple(std::span<Instruction* const> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Instruction* e : elements) shapes.push_back(e->shape());
  return Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

Instruction* HloEmitter::Unary(Opcode opcode, Instruction* x) {
  Shape shape = x->shape();
  if (opcode == Opcode::kIsFinite) shape.set_element_type(PrimitiveType::kPred);
  if ((opcode == Opcode::kReal || opcode == Opcode::kImag || opcode == Opcode::kAbs) &&
      hlo::IsComplex(shape.element_type())) {
    shape.set_element_type(shape.element_type() == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
  }
  return Add(opcode, std::move(shape), {x});
}

Instruction* HloEmitter::Binary(Opcode opcode, Instruction* a, Instruction* b) {
  Shape shape = a->shape();
  if (opcode == Opcode::kComplex) {
    shape.set_element_type(shape.element_type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64);
  }
  return Add(opcode, std::move(shape), {a, b});
}

Instruction* HloEmitter::Compare(Instruction* a, Instruction* b, std::string_view direction, std::string_view type) {
  Shape shape = a->shape();
  shape.set_element_type(PrimitiveType::kPred);
  Instruction* c = Add(Opcode::kCompare, std::move(shape), {a, b});
  SetAttr(c, "direction", direction);
  if (!type.empty()) SetAttr(c, "type", type);
  return c;
}

Instruction* HloEmitter::Select(Instruction* pred, Instruction* a, Instruction* b) {
  return Add(Opcode::kSelect, a->shape(), {pred, a, b});
}

void HloEmitter::SetAttr(Instruction* instr, std::string_view name, std::string_view value) {
  instr->AddAttribute(hlo::Attribute::Text(name, value));
}

void HloEmitter::SetRawAttr(Instruction* instr, std::string_view name, std::string_view value) {
  hlo::Attribute a = hlo::Attribute::Text(name, value);
  a.kind = hlo::Attribute::Kind::kRaw;
  instr->AddAttribute(std::move(a));
}

}  // namespace kiln::stablehlo
