#include "compiler/stablehlo/shape_folding.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "compiler/hlo/op_attributes.h"

namespace kiln::stablehlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

bool IsFoldableType(PrimitiveType t) { return t == PrimitiveType::kPred || hlo::IsInteger(t); }

// `v` as an element of type `t` holds it: pred as 0/1, narrow integers
// wrapped to their width (two's complement).
int64_t Wrap(int64_t v, PrimitiveType t) {
  if (t == PrimitiveType::kPred) return v != 0 ? 1 : 0;
  const int width = hlo::BitWidth(t);
  if (width >= 64) return v;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  uint64_t bits = static_cast<uint64_t>(v) & mask;
  if (hlo::IsSignedInteger(t) && (bits >> (width - 1)) != 0) bits |= ~mask;
  return static_cast<int64_t>(bits);
}

// The static dimensions of an array shape of few elements, or nullopt.
std::optional<std::vector<int64_t>> SmallStaticDims(const hlo::Shape& shape) {
  if (!shape.IsArray() || !IsFoldableType(shape.element_type())) return std::nullopt;
  int64_t count = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.is_dynamic_dimension(i) || shape.dimensions(i) < 0) return std::nullopt;
    count *= shape.dimensions(i);
    if (count > kMaxFoldedElements) return std::nullopt;
  }
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Row-major multi-index of `linear` in `dims`.
std::vector<int64_t> MultiIndex(const std::vector<int64_t>& dims, int64_t linear) {
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 0) return index;
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
  return index;
}

int64_t Linear(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// Element i of `t` read as an operand of an elementwise op over `count`
// elements (a scalar stands for every element).
int64_t At(const IntTensor& t, int64_t i) { return t.values.size() == 1 ? t.values[0] : t.values[i]; }

std::optional<int64_t> Binary(Opcode op, int64_t a, int64_t b, PrimitiveType type) {
  const bool is_unsigned = hlo::IsUnsignedInteger(type);
  switch (op) {
    case Opcode::kAdd: return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case Opcode::kSubtract: return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
    case Opcode::kMultiply: return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case Opcode::kDivide:
    case Opcode::kRemainder:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      if (is_unsigned) {
        const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
        return static_cast<int64_t>(op == Opcode::kDivide ? ua / ub : ua % ub);
      }
      return op == Opcode::kDivide ? a / b : a % b;
    case Opcode::kMaximum:
      return is_unsigned ? static_cast<int64_t>(std::max(static_cast<uint64_t>(a), static_cast<uint64_t>(b)))
                         : std::max(a, b);
    case Opcode::kMinimum:
      return is_unsigned ? static_cast<int64_t>(std::min(static_cast<uint64_t>(a), static_cast<uint64_t>(b)))
                         : std::min(a, b);
    case Opcode::kAnd: return a & b;
    case Opcode::kOr: return a | b;
    case Opcode::kXor: return a ^ b;
    default: return std::nullopt;
  }
}

std::optional<int64_t> Compare(ComparisonDirection direction, int64_t a, int64_t b, bool is_unsigned) {
  const auto less = [&](int64_t x, int64_t y) {
    return is_unsigned ? static_cast<uint64_t>(x) < static_cast<uint64_t>(y) : x < y;
  };
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return less(a, b);
    case ComparisonDirection::kLe: return !less(b, a);
    case ComparisonDirection::kGt: return less(b, a);
    case ComparisonDirection::kGe: return !less(a, b);
  }
  return std::nullopt;
}

std::optional<IntTensor> FoldElementwise(const Instruction& instr, std::span<const IntTensor* const> operands,
                                         IntTensor out) {
  const int64_t n = ElementCount(out.dims);
  for (const IntTensor* o : operands) {
    if (static_cast<int64_t>(o->values.size()) != n && o->values.size() != 1) return std::nullopt;
  }
  const Opcode op = instr.opcode();
  out.values.resize(n);
  std::optional<hlo::Comparison> comparison;
  if (op == Opcode::kCompare) {
    Result<hlo::Comparison> c = hlo::GetComparison(instr);
    if (!c) return std::nullopt;
    comparison = *c;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::optional<int64_t> v;
    const PrimitiveType in_type = operands.empty() ? out.type : operands[0]->type;
    switch (op) {
      case Opcode::kNegate: v = -At(*operands[0], i); break;
      case Opcode::kAbs: v = At(*operands[0], i) < 0 ? -At(*operands[0], i) : At(*operands[0], i); break;
      case Opcode::kNot: v = out.type == PrimitiveType::kPred ? !At(*operands[0], i) : ~At(*operands[0], i); break;
      case Opcode::kSign: v = (At(*operands[0], i) > 0) - (At(*operands[0], i) < 0); break;
      case Opcode::kConvert: v = At(*operands[0], i); break;
      case Opcode::kCompare:
        v = Compare(comparison->direction, At(*operands[0], i), At(*operands[1], i), hlo::IsUnsignedInteger(in_type));
        break;
      case Opcode::kSelect: v = At(*operands[0], i) != 0 ? At(*operands[1], i) : At(*operands[2], i); break;
      case Opcode::kClamp:
        v = std::min(std::max(At(*operands[1], i), At(*operands[0], i)), At(*operands[2], i));
        break;
      default: v = Binary(op, At(*operands[0], i), At(*operands[1], i), out.type); break;
    }
    if (!v) return std::nullopt;
    out.values[i] = Wrap(*v, out.type);
  }
  return out;
}

// Each element of `out` read from `x` at the index `source` gives for its
// own index (nullopt, or an index out of range: not foldable).
template <typename SourceIndex>
std::optional<IntTensor> Remap(const IntTensor& x, IntTensor out, SourceIndex source) {
  const int64_t n = ElementCount(out.dims);
  out.values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    std::optional<std::vector<int64_t>> from = source(MultiIndex(out.dims, i));
    if (!from || from->size() != x.dims.size()) return std::nullopt;
    for (size_t k = 0; k < from->size(); ++k) {
      if ((*from)[k] < 0 || (*from)[k] >= x.dims[k]) return std::nullopt;
    }
    out.values[i] = x.values[Linear(x.dims, *from)];
  }
  return out;
}

std::optional<IntTensor> FoldBroadcast(const Instruction& instr, const IntTensor& x, IntTensor out) {
  Result<std::vector<int64_t>> dims = hlo::GetIntListAttributeOr(instr, "dimensions");
  if (!dims || dims->size() != x.dims.size()) return std::nullopt;
  return Remap(x, std::move(out), [&](const std::vector<int64_t>& index) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> from;
    for (int64_t d : *dims) {
      if (d < 0 || d >= static_cast<int64_t>(index.size())) return std::nullopt;
      from.push_back(index[d]);
    }
    return from;
  });
}

std::optional<IntTensor> FoldConcatenate(const Instruction& instr, std::span<const IntTensor* const> operands,
                                         IntTensor out) {
  Result<std::vector<int64_t>> dim = hlo::GetIntListAttributeOr(instr, "dimensions");
  if (!dim || dim->size() != 1 || (*dim)[0] < 0 || (*dim)[0] >= static_cast<int64_t>(out.dims.size())) {
    return std::nullopt;
  }
  const size_t d = static_cast<size_t>((*dim)[0]);
  const int64_t n = ElementCount(out.dims);
  out.values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> index = MultiIndex(out.dims, i);
    const IntTensor* source = nullptr;
    for (const IntTensor* o : operands) {
      if (o->dims.size() != out.dims.size()) return std::nullopt;
      if (index[d] < o->dims[d]) {
        source = o;
        break;
      }
      index[d] -= o->dims[d];
    }
    if (source == nullptr) return std::nullopt;
    out.values[i] = source->values[Linear(source->dims, index)];
  }
  return out;
}

std::optional<IntTensor> FoldSlice(const Instruction& instr, const IntTensor& x, IntTensor out) {
  Result<hlo::SliceSpec> slice = hlo::GetSliceSpec(instr);
  if (!slice || slice->starts.size() != x.dims.size() || out.dims.size() != x.dims.size()) return std::nullopt;
  return Remap(x, std::move(out), [&](std::vector<int64_t> index) -> std::optional<std::vector<int64_t>> {
    for (size_t k = 0; k < index.size(); ++k) index[k] = slice->starts[k] + index[k] * slice->strides[k];
    return index;
  });
}

std::optional<IntTensor> FoldTranspose(const Instruction& instr, const IntTensor& x, IntTensor out) {
  Result<std::vector<int64_t>> perm = hlo::GetIntListAttributeOr(instr, "dimensions");
  if (!perm || perm->size() != x.dims.size()) return std::nullopt;
  return Remap(x, std::move(out), [&](const std::vector<int64_t>& index) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> from(index.size());
    for (size_t k = 0; k < index.size(); ++k) {
      if ((*perm)[k] < 0 || (*perm)[k] >= static_cast<int64_t>(from.size())) return std::nullopt;
      from[(*perm)[k]] = index[k];
    }
    return from;
  });
}

std::optional<IntTensor> FoldIota(const Instruction& instr, IntTensor out) {
  Result<int64_t> dim = hlo::GetIotaDimension(instr);
  if (!dim || *dim < 0 || *dim >= static_cast<int64_t>(out.dims.size())) return std::nullopt;
  const int64_t n = ElementCount(out.dims);
  out.values.resize(n);
  for (int64_t i = 0; i < n; ++i) out.values[i] = Wrap(MultiIndex(out.dims, i)[*dim], out.type);
  return out;
}

}  // namespace

std::optional<IntTensor> IntTensorOf(const hlo::Literal& literal) {
  std::optional<std::vector<int64_t>> dims = SmallStaticDims(literal.shape());
  if (!dims || literal.elided()) return std::nullopt;
  IntTensor t;
  t.type = literal.shape().element_type();
  t.dims = std::move(*dims);
  const int64_t n = ElementCount(t.dims);
  if (literal.element_count() != n) return std::nullopt;
  const int width = hlo::HostByteWidth(t.type);
  t.values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, literal.data().data() + i * width, static_cast<size_t>(width));
    t.values[i] = Wrap(static_cast<int64_t>(bits), t.type);
  }
  return t;
}

hlo::Literal LiteralOf(const IntTensor& value) {
  hlo::Literal literal(hlo::Shape(value.type, value.dims));
  const int width = hlo::HostByteWidth(value.type);
  for (size_t i = 0; i < value.values.size(); ++i) {
    const uint64_t bits = static_cast<uint64_t>(value.values[i]);
    std::memcpy(literal.mutable_data().data() + i * width, &bits, static_cast<size_t>(width));
  }
  return literal;
}

std::optional<IntTensor> FoldInstruction(const Instruction& instr, std::span<const IntTensor* const> operands) {
  if (instr.opcode() == Opcode::kConstant) {
    return instr.literal() != nullptr ? IntTensorOf(*instr.literal()) : std::nullopt;
  }
  std::optional<std::vector<int64_t>> dims = SmallStaticDims(instr.shape());
  if (!dims) return std::nullopt;
  IntTensor out;
  out.type = instr.shape().element_type();
  out.dims = std::move(*dims);
  if (instr.opcode() == Opcode::kGetDimensionSize) {
    Result<std::vector<int64_t>> dim = hlo::GetIntListAttributeOr(instr, "dimensions");
    if (!dim || dim->size() != 1 || instr.operand_count() != 1) return std::nullopt;
    const hlo::Shape& x = instr.operand(0)->shape();
    const int64_t d = (*dim)[0];
    if (!x.IsArray() || d < 0 || d >= x.rank() || x.is_dynamic_dimension(d)) return std::nullopt;
    out.values = {Wrap(x.dimensions(d), out.type)};
    return out;
  }
  if (instr.opcode() == Opcode::kIota) return FoldIota(instr, std::move(out));
  if (operands.empty() || static_cast<int64_t>(operands.size()) != instr.operand_count()) return std::nullopt;
  for (const IntTensor* o : operands) {
    if (o == nullptr) return std::nullopt;
  }
  switch (instr.opcode()) {
    case Opcode::kReshape:
    case Opcode::kCopy:
      if (static_cast<int64_t>(operands[0]->values.size()) != ElementCount(out.dims)) return std::nullopt;
      out.values = operands[0]->values;
      return out;
    case Opcode::kBroadcast: return FoldBroadcast(instr, *operands[0], std::move(out));
    case Opcode::kConcatenate: return FoldConcatenate(instr, operands, std::move(out));
    case Opcode::kSlice: return FoldSlice(instr, *operands[0], std::move(out));
    case Opcode::kTranspose: return FoldTranspose(instr, *operands[0], std::move(out));
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kNot:
    case Opcode::kSign:
    case Opcode::kConvert:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return FoldElementwise(instr, operands, std::move(out));
    default:
      return std::nullopt;
  }
}

}  // namespace kiln::stablehlo
