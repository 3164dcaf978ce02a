#include "compiler/hlo/shape_inference.h"

#include <algorithm>
#include <string>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {
namespace {

using Dims = std::span<const int64_t>;

std::string Str(const Shape& s) { return s.ToString(); }

std::string Join(Dims v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "}";
}

std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

Status ExpectArray(const Shape& s, std::string_view what) {
  if (!s.IsArray()) return MakeError(std::string(what) + " must be an array, got " + Str(s));
  return Ok();
}

bool InRange(int64_t v, int64_t n) { return v >= 0 && v < n; }
bool Contains(Dims v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
bool AllUnique(Dims v) {
  std::vector<int64_t> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

// Checks that every value of `dims` is a valid, distinct dimension of a
// rank-`rank` shape (and sorted when asked).
Status CheckDimList(Dims dims, int64_t rank, std::string_view what, bool sorted = false) {
  for (int64_t d : dims) {
    if (!InRange(d, rank)) {
      return MakeError(std::string(what) + " " + Join(dims) + " has dimension " +
                       std::to_string(d) + " out of range for rank " + std::to_string(rank));
    }
  }
  if (!AllUnique(dims))
    return MakeError(std::string(what) + " " + Join(dims) + " repeats a dimension");
  if (sorted && !std::is_sorted(dims.begin(), dims.end())) {
    return MakeError(std::string(what) + " " + Join(dims) + " must be sorted");
  }
  return Ok();
}

bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloatingPoint(a) && IsFloatingPoint(b));
}

PrimitiveType HigherPrecision(PrimitiveType a, PrimitiveType b) {
  if (IsFloatingPoint(a) && IsFloatingPoint(b) && BitWidth(b) > BitWidth(a)) return b;
  return a;
}

// dims[i] of s, with its dynamic flag, for building inferred shapes.
struct Dim {
  int64_t size;
  bool dynamic;
};
Dim DimOf(const Shape& s, int64_t i) { return {s.dimensions(i), IsDynamicDimension(s, i)}; }

Result<Shape> MakeArray(PrimitiveType type, const std::vector<Dim>& dims) {
  if (static_cast<int64_t>(dims.size()) > kMaxRank) {
    return MakeError("result rank " + std::to_string(dims.size()) + " exceeds " +
                     std::to_string(kMaxRank));
  }
  std::vector<int64_t> sizes;
  for (const Dim& d : dims) sizes.push_back(d.dynamic && d.size < 0 ? kUnboundedDim : d.size);
  Shape s(type, std::move(sizes));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].dynamic) s.set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  return s;
}

std::vector<Dim> DimsOf(const Shape& s) {
  std::vector<Dim> out;
  for (int64_t i = 0; i < s.rank(); ++i) out.push_back(DimOf(s, i));
  return out;
}

// Lenient equality of dimension i of a and dimension j of b.
bool SizesMatch(const Shape& a, int64_t i, const Shape& b, int64_t j) {
  return IsDynamicDimension(a, i) || IsDynamicDimension(b, j) || a.dimensions(i) == b.dimensions(j);
}

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

// XLA's DilatedBound and StridedBound over 128-bit intermediates.
Result<int64_t> WindowOutputSize(int64_t base, const WindowDimension& w) {
  __int128 dilated_base = base == 0 ? 0 : (__int128(base) - 1) * w.base_dilation + 1;
  __int128 padded = dilated_base + w.padding_low + w.padding_high;
  __int128 window = w.size == 0 ? 0 : (__int128(w.size) - 1) * w.window_dilation + 1;
  __int128 out = window > padded ? 0 : (padded - window) / w.stride + 1;
  if (out > INT64_MAX) return MakeError("window output size overflows");
  return static_cast<int64_t>(out);
}

}  // namespace

Result<ProgramShape> GetProgramShape(const Computation& computation) {
  ProgramShape ps;
  for (size_t i = 0; i < computation.parameters().size(); ++i) {
    const Instruction* p = computation.parameters()[i];
    if (p == nullptr) {
      return MakeError("computation %" + computation.name() + " has no parameter " +
                       std::to_string(i));
    }
    ps.parameters.push_back(p->shape());
  }
  if (computation.root() == nullptr) {
    return MakeError("computation %" + computation.name() + " has no root");
  }
  ps.result = computation.root()->shape();
  return ps;
}

bool IsDynamicDimension(const Shape& shape, int64_t i) {
  if (!InRange(i, shape.rank())) return false;
  return shape.dimensions(i) < 0 || (i < 64 && shape.is_dynamic_dimension(i));
}

bool SameDimensions(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesMatch(a, i, b, i)) return false;
  }
  return true;
}

bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision) {
  if (a.IsTuple() || b.IsTuple() || a.IsBuffer() || b.IsBuffer()) {
    if (a.element_type() != b.element_type() ||
        a.tuple_shapes().size() != b.tuple_shapes().size()) {
      return false;
    }
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i) {
      if (!ShapesCompatible(a.tuple_shapes(i), b.tuple_shapes(i), ignore_fp_precision)) {
        return false;
      }
    }
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return a.element_type() == b.element_type();
  bool types = ignore_fp_precision ? SameTypeIgnoringFp(a.element_type(), b.element_type())
                                   : a.element_type() == b.element_type();
  return types && SameDimensions(a, b);
}

// ---- Elementwise --------------------------------------------------------------

Result<Shape> InferUnaryShape(Opcode opcode, const Shape& operand) {
  if (opcode == Opcode::kCopy || opcode == Opcode::kDomain) return operand;
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const PrimitiveType t = operand.element_type();
  const bool fp = IsFloatingPoint(t), cx = IsComplex(t), integral = IsInteger(t);
  auto fail = [&](std::string_view expected) {
    return MakeError(std::string(OpcodeName(opcode)) + " expects " + std::string(expected) +
                     " operands, got " + TypeName(t));
  };
  auto with_type = [&](PrimitiveType nt) {
    Shape s = operand;
    s.set_element_type(nt);
    return s;
  };
  auto component = [&] {
    return with_type(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
  };
  switch (opcode) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      if (!fp) return fail("floating-point");
      return operand;
    case Opcode::kIsFinite:
      if (!fp) return fail("floating-point");
      return with_type(PrimitiveType::kPred);
    case Opcode::kReal:
    case Opcode::kImag:
      if (cx) return component();
      if (!fp) return fail("floating-point or complex");
      return operand;
    case Opcode::kAbs:
      if (cx) return component();
      if (!fp && !IsSignedInteger(t)) return fail("signed or floating-point");
      return operand;
    case Opcode::kSign:
      if (!fp && !cx && !IsSignedInteger(t)) return fail("signed, floating-point or complex");
      return operand;
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      if (!integral) return fail("integer");
      return operand;
    case Opcode::kNot:
      if (!integral && t != PrimitiveType::kPred) return fail("pred or integer");
      return operand;
    case Opcode::kNegate:
      if (!integral && !fp && !cx) return fail("numeric");
      return operand;
    case Opcode::kConvert:
      return operand;
    default:  // transcendental functions
      if (!fp && !cx) return fail("floating-point or complex");
      return operand;
  }
}

Result<Shape> InferBinaryShape(Opcode opcode, const Shape& lhs, const Shape& rhs) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  const PrimitiveType lt = lhs.element_type(), rt = rhs.element_type();
  const std::string op(OpcodeName(opcode));
  if (!SameTypeIgnoringFp(lt, rt)) {
    return MakeError(op + " operands have different element types: " + Str(lhs) + " and " +
                     Str(rhs));
  }
  if (!SameDimensions(lhs, rhs)) {
    return MakeError(op + " operands have different dimensions: " + Str(lhs) + " and " + Str(rhs) +
                     " (implicit broadcast is not allowed in HLO)");
  }
  std::vector<Dim> dims = DimsOf(lhs);
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (IsDynamicDimension(rhs, i)) dims[i].dynamic = true;
  }
  PrimitiveType result = HigherPrecision(lt, rt);
  switch (opcode) {
    case Opcode::kSubtract:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      if (lt == PrimitiveType::kPred) return MakeError(op + " does not accept pred operands");
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (lt != PrimitiveType::kPred && !IsInteger(lt)) {
        return MakeError(op + " expects pred or integer operands, got " + TypeName(lt));
      }
      break;
    case Opcode::kCompare:
      result = PrimitiveType::kPred;
      break;
    case Opcode::kComplex:
      if (lt == PrimitiveType::kF32 && rt == PrimitiveType::kF32) {
        result = PrimitiveType::kC64;
      } else if (lt == PrimitiveType::kF64 && rt == PrimitiveType::kF64) {
        result = PrimitiveType::kC128;
      } else {
        return MakeError("complex expects f32 or f64 operands, got " + TypeName(lt));
      }
      break;
    default:
      break;
  }
  return MakeArray(result, dims);
}

Result<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max) {
  KILN_RETURN_IF_ERROR(ExpectArray(min, "clamp min"));
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "clamp operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(max, "clamp max"));
  for (const Shape* bound : {&min, &max}) {
    if (!SameTypeIgnoringFp(bound->element_type(), operand.element_type()) ||
        (!IsScalar(*bound) && !SameDimensions(*bound, operand))) {
      return MakeError("clamp bounds must be scalars or match the operand: " + Str(min) + ", " +
                       Str(operand) + ", " + Str(max));
    }
  }
  return operand;
}

Result<Shape> InferSelectShape(const Shape& pred, const Shape& on_true, const Shape& on_false) {
  KILN_RETURN_IF_ERROR(ExpectArray(pred, "select predicate"));
  KILN_RETURN_IF_ERROR(ExpectArray(on_true, "select on_true"));
  KILN_RETURN_IF_ERROR(ExpectArray(on_false, "select on_false"));
  if (!ShapesCompatible(on_true, on_false, /*ignore_fp_precision=*/true)) {
    return MakeError("select operands must have the same shape, got " + Str(on_true) + " and " +
                     Str(on_false));
  }
  if (pred.element_type() != PrimitiveType::kPred) {
    return MakeError("select predicate must be pred, got " + Str(pred));
  }
  if (!SameDimensions(pred, on_true)) {
    return MakeError("select predicate " + Str(pred) + " must have the dimensions of " +
                     Str(on_true));
  }
  Shape s = on_true;
  s.set_element_type(HigherPrecision(on_true.element_type(), on_false.element_type()));
  return s;
}

Result<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "convert operand"));
  if (!IsArrayType(new_type)) return MakeError("cannot convert to " + TypeName(new_type));
  Shape s = operand;
  s.set_element_type(new_type);
  return s;
}

Result<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "bitcast-convert operand"));
  const PrimitiveType old_type = operand.element_type();
  if (!IsArrayType(new_type)) return MakeError("cannot bitcast-convert to " + TypeName(new_type));
  if (IsComplex(old_type) != IsComplex(new_type)) {
    return MakeError("bitcast-convert between complex and real types: " + TypeName(old_type) +
                     " to " + TypeName(new_type));
  }
  const int in_bits = BitWidth(old_type), out_bits = BitWidth(new_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return MakeError("bitcast-convert between types of indivisible widths: " + TypeName(old_type) +
                     " to " + TypeName(new_type));
  }
  std::vector<Dim> dims = DimsOf(operand);
  const int ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  if (in_bits > out_bits) {
    dims.push_back({ratio, false});
  } else if (in_bits < out_bits) {
    if (dims.empty() || dims.back().size != ratio) {
      return MakeError("bitcast-convert from " + Str(operand) + " to " + TypeName(new_type) +
                       " needs a last dimension of size " + std::to_string(ratio));
    }
    dims.pop_back();
  }
  return MakeArray(new_type, dims);
}

Result<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                          PrimitiveType new_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "stochastic-convert operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(random, "stochastic-convert random bits"));
  if (!IsUnsignedInteger(random.element_type())) {
    return MakeError("stochastic-convert random bits must be unsigned, got " + Str(random));
  }
  if (!IsFloatingPoint(operand.element_type())) {
    return MakeError("stochastic-convert operand must be floating-point, got " + Str(operand));
  }
  if (BitWidth(operand.element_type()) != BitWidth(random.element_type()) ||
      !SameDimensions(operand, random)) {
    return MakeError("stochastic-convert random bits " + Str(random) + " do not match operand " +
                     Str(operand));
  }
  return InferConvertShape(operand, new_type);
}

Result<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                        int64_t mantissa_bits) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reduce-precision operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return MakeError("reduce-precision expects a floating-point operand, got " + Str(operand));
  }
  if (exponent_bits < 1) return MakeError("exponent_bits must be at least 1");
  if (mantissa_bits < 0) return MakeError("mantissa_bits must not be negative");
  return operand;
}

// ---- Data movement -----------------------------------------------------------

Result<Shape> InferBroadcastShape(const Shape& operand, const Shape& output, Dims dimensions) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "broadcast operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(output, "broadcast result"));
  if (operand.element_type() != output.element_type()) {
    return MakeError("broadcast changes the element type from " + TypeName(operand.element_type()) +
                     " to " + TypeName(output.element_type()));
  }
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return MakeError("broadcast dimensions " + Join(dimensions) +
                     " must have one entry per operand dimension (operand " + Str(operand) + ")");
  }
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, output.rank(), "broadcast dimensions"));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!SizesMatch(operand, i, output, dimensions[i])) {
      return MakeError("operand dimension " + std::to_string(i) + " has size " +
                       std::to_string(operand.dimensions(i)) + " but result dimension " +
                       std::to_string(dimensions[i]) + " has size " +
                       std::to_string(output.dimensions(dimensions[i])));
    }
  }
  return output;
}

Result<Shape> InferReshapeShape(const Shape& operand, const Shape& output) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reshape operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(output, "reshape result"));
  if (operand.element_type() != output.element_type()) {
    return MakeError("reshape changes the element type from " + TypeName(operand.element_type()) +
                     " to " + TypeName(output.element_type()));
  }
  int64_t in = operand.ElementCount(), out = output.ElementCount();
  if (in >= 0 && out >= 0 && in != out) {
    return MakeError("reshape changes the element count from " + std::to_string(in) + " (" +
                     Str(operand) + ") to " + std::to_string(out) + " (" + Str(output) + ")");
  }
  return output;
}

Result<Shape> InferTransposeShape(const Shape& operand, Dims permutation) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "transpose operand"));
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return MakeError("transpose dimensions " + Join(permutation) +
                     " are not a permutation of the operand dimensions of " + Str(operand));
  }
  KILN_RETURN_IF_ERROR(CheckDimList(permutation, operand.rank(), "transpose dimensions"));
  std::vector<Dim> dims;
  for (int64_t p : permutation) dims.push_back(DimOf(operand, p));
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferReverseShape(const Shape& operand, Dims dimensions) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "reverse operand"));
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, operand.rank(), "reverse dimensions"));
  return operand;
}

Result<Shape> InferSliceShape(const Shape& operand, const SliceSpec& slice) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "slice operand"));
  const int64_t rank = operand.rank();
  if (static_cast<int64_t>(slice.starts.size()) != rank ||
      slice.limits.size() != slice.starts.size() || slice.strides.size() != slice.starts.size()) {
    return MakeError("slice has " + std::to_string(slice.starts.size()) +
                     " dimensions but the operand " + Str(operand) + " has rank " +
                     std::to_string(rank));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t start = slice.starts[i], limit = slice.limits[i], stride = slice.strides[i];
    const std::string where = "slice dimension " + std::to_string(i) + " [" +
                              std::to_string(start) + ":" + std::to_string(limit) + ":" +
                              std::to_string(stride) + "]";
    if (start < 0) return MakeError(where + " has a negative start");
    if (stride <= 0) return MakeError(where + " has a non-positive stride");
    if (start > limit) return MakeError(where + " has start greater than limit");
    if (operand.dimensions(i) >= 0 && limit > operand.dimensions(i)) {
      return MakeError(where + " exceeds the operand dimension size " +
                       std::to_string(operand.dimensions(i)));
    }
    int64_t size = static_cast<int64_t>((__int128(limit) - start + stride - 1) / stride);
    dims.push_back({size, size != 1 && IsDynamicDimension(operand, i)});
  }
  return MakeArray(operand.element_type(), dims);
}

namespace {

// Checks dynamic-slice / dynamic-update-slice start indices: either one
// scalar per operand dimension (all the same integer type) or, in the old
// form, a single rank-1 vector.
Status CheckStartIndices(const Shape& operand, std::span<const Shape> indices, const char* op) {
  const std::string name(op);
  if (indices.size() == 1 && indices[0].IsArray() && indices[0].rank() == 1) {
    if (!IsInteger(indices[0].element_type())) {
      return MakeError(name + " start indices must be integers, got " + Str(indices[0]));
    }
    if (!SizesMatch(indices[0], 0, Shape(PrimitiveType::kS32, {operand.rank()}), 0)) {
      return MakeError(name + " start index vector " + Str(indices[0]) +
                       " must have one entry per operand dimension of " + Str(operand));
    }
    return Ok();
  }
  if (static_cast<int64_t>(indices.size()) != operand.rank()) {
    return MakeError(name + " has " + std::to_string(indices.size()) +
                     " start indices but the operand " + Str(operand) + " has rank " +
                     std::to_string(operand.rank()));
  }
  for (const Shape& index : indices) {
    if (!IsScalar(index) || !IsInteger(index.element_type())) {
      return MakeError(name + " start indices must be integer scalars, got " + Str(index));
    }
    if (index.element_type() != indices[0].element_type()) {
      return MakeError(name + " start indices must all have the same type, got " + Str(indices[0]) +
                       " and " + Str(index));
    }
  }
  return Ok();
}

}  // namespace

Result<Shape> InferDynamicSliceShape(const Shape& operand, std::span<const Shape> start_indices,
                                     Dims slice_sizes) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-slice operand"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices, "dynamic-slice"));
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return MakeError("dynamic_slice_sizes " + Join(slice_sizes) +
                     " must have one entry per operand dimension of " + Str(operand));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0)
      return MakeError("dynamic-slice size " + std::to_string(i) + " is negative");
    if (!IsDynamicDimension(operand, i) && slice_sizes[i] > operand.dimensions(i)) {
      return MakeError("dynamic-slice size " + std::to_string(slice_sizes[i]) + " of dimension " +
                       std::to_string(i) + " exceeds the operand dimension size " +
                       std::to_string(operand.dimensions(i)));
    }
    dims.push_back({slice_sizes[i], false});
  }
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                           std::span<const Shape> start_indices) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-update-slice operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(update, "dynamic-update-slice update"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices, "dynamic-update-slice"));
  if (update.rank() != operand.rank()) {
    return MakeError("update " + Str(update) + " must have the rank of the operand " +
                     Str(operand));
  }
  if (!SameTypeIgnoringFp(update.element_type(), operand.element_type())) {
    return MakeError("update " + Str(update) + " must have the element type of the operand " +
                     Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!IsDynamicDimension(operand, i) && !IsDynamicDimension(update, i) &&
        update.dimensions(i) > operand.dimensions(i)) {
      return MakeError("update dimension " + std::to_string(i) + " of size " +
                       std::to_string(update.dimensions(i)) +
                       " exceeds the operand dimension size " +
                       std::to_string(operand.dimensions(i)));
    }
  }
  return operand;
}

Result<Shape> InferConcatenateShape(std::span<const Shape> operands, int64_t dimension) {
  if (operands.empty()) return MakeError("concatenate needs at least one operand");
  const Shape& first = operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(first, "concatenate operand 0"));
  if (!InRange(dimension, first.rank())) {
    return MakeError("concatenate dimension " + std::to_string(dimension) +
                     " is out of range for " + Str(first));
  }
  std::vector<Dim> dims = DimsOf(first);
  PrimitiveType type = first.element_type();
  for (size_t k = 1; k < operands.size(); ++k) {
    const Shape& s = operands[k];
    KILN_RETURN_IF_ERROR(ExpectArray(s, "concatenate operand " + std::to_string(k)));
    if (s.rank() != first.rank() || !SameTypeIgnoringFp(s.element_type(), type)) {
      return MakeError("concatenate operand " + std::to_string(k) + " " + Str(s) +
                       " does not match operand 0 " + Str(first));
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i == dimension) continue;
      if (!SizesMatch(first, i, s, i)) {
        return MakeError("concatenate operand " + std::to_string(k) + " " + Str(s) +
                         " differs from operand 0 " + Str(first) + " in dimension " +
                         std::to_string(i));
      }
    }
    Dim& d = dims[dimension];
    Dim add = DimOf(s, dimension);
    d.dynamic = d.dynamic || add.dynamic;
    if (d.size < 0 || add.size < 0) {
      d.size = kUnboundedDim;
    } else if (__builtin_add_overflow(d.size, add.size, &d.size)) {
      return MakeError("concatenated dimension size overflows");
    }
    type = HigherPrecision(type, s.element_type());
  }
  return MakeArray(type, dims);
}

Result<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                            const PaddingConfig& padding) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "pad operand"));
  if (!IsScalar(padding_value)) {
    return MakeError("padding value must be a scalar, got " + Str(padding_value));
  }
  if (!SameTypeIgnoringFp(operand.element_type(), padding_value.element_type())) {
    return MakeError("padding value " + Str(padding_value) + " does not match operand " +
                     Str(operand));
  }
  if (static_cast<int64_t>(padding.dimensions.size()) != operand.rank()) {
    return MakeError("padding has " + std::to_string(padding.dimensions.size()) +
                     " dimensions but the operand " + Str(operand) + " has rank " +
                     std::to_string(operand.rank()));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = padding.dimensions[i];
    if (p.interior < 0)
      return MakeError("interior padding of dimension " + std::to_string(i) + " is negative");
    Dim d = DimOf(operand, i);
    if (d.size >= 0) {
      __int128 size = __int128(d.size) + p.edge_low + p.edge_high +
                      __int128(std::max<int64_t>(d.size - 1, 0)) * p.interior;
      if (size < 0) return MakeError("padding makes dimension " + std::to_string(i) + " negative");
      if (size > INT64_MAX) return MakeError("padding overflows dimension " + std::to_string(i));
      d.size = static_cast<int64_t>(size);
    }
    dims.push_back(d);
  }
  return MakeArray(HigherPrecision(operand.element_type(), padding_value.element_type()), dims);
}

Result<Shape> InferIotaShape(const Shape& output, int64_t iota_dimension) {
  KILN_RETURN_IF_ERROR(ExpectArray(output, "iota result"));
  if (output.rank() == 0) return MakeError("iota result must not be a scalar");
  if (!InRange(iota_dimension, output.rank())) {
    return MakeError("iota_dimension " + std::to_string(iota_dimension) + " is out of range for " +
                     Str(output));
  }
  PrimitiveType t = output.element_type();
  if (!IsInteger(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
    return MakeError("iota does not support element type " + TypeName(t));
  }
  return output;
}

Result<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index) {
  if (!tuple.IsTuple()) return MakeError("operand " + Str(tuple) + " is not a tuple");
  if (!InRange(index, static_cast<int64_t>(tuple.tuple_shapes().size()))) {
    return MakeError("tuple index " + std::to_string(index) + " is out of range for " + Str(tuple));
  }
  return tuple.tuple_shapes(index);
}

Result<Shape> InferTupleShape(std::span<const Shape> operands) {
  return Shape::Tuple(std::vector<Shape>(operands.begin(), operands.end()));
}

Result<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "get-dimension-size operand"));
  if (!InRange(dimension, operand.rank())) {
    return MakeError("dimension " + std::to_string(dimension) + " is out of range for " +
                     Str(operand));
  }
  return Shape(PrimitiveType::kS32, {});
}

Result<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                         int64_t dimension) {
  KILN_ASSIGN_OR_RETURN(Shape unused, InferGetDimensionSizeShape(operand, dimension));
  (void)unused;
  if (!IsScalar(size) || size.element_type() != PrimitiveType::kS32) {
    return MakeError("set-dimension-size size must be s32[], got " + Str(size));
  }
  if (dimension >= kMaxRank)
    return MakeError("dimension " + std::to_string(dimension) + " is too large");
  Shape s = operand;
  s.set_dynamic_dimension(dimension, true);
  return s;
}

// ---- Contractions and windows ------------------------------------------------

Result<Shape> InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                            PrimitiveType result_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "dot lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "dot rhs"));
  KILN_RETURN_IF_ERROR(CheckDimList(d.lhs_batch_dimensions, lhs.rank(), "lhs_batch_dims"));
  KILN_RETURN_IF_ERROR(CheckDimList(d.rhs_batch_dimensions, rhs.rank(), "rhs_batch_dims"));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.lhs_contracting_dimensions, lhs.rank(), "lhs_contracting_dims"));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.rhs_contracting_dimensions, rhs.rank(), "rhs_contracting_dims"));
  for (int64_t b : d.lhs_batch_dimensions) {
    if (Contains(d.lhs_contracting_dimensions, b)) {
      return MakeError("lhs dimension " + std::to_string(b) + " is both batch and contracting");
    }
  }
  for (int64_t b : d.rhs_batch_dimensions) {
    if (Contains(d.rhs_contracting_dimensions, b)) {
      return MakeError("rhs dimension " + std::to_string(b) + " is both batch and contracting");
    }
  }
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return MakeError("lhs has " + std::to_string(d.lhs_contracting_dimensions.size()) +
                     " contracting dimensions but rhs has " +
                     std::to_string(d.rhs_contracting_dimensions.size()));
  }
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return MakeError("lhs has " + std::to_string(d.lhs_batch_dimensions.size()) +
                     " batch dimensions but rhs has " +
                     std::to_string(d.rhs_batch_dimensions.size()));
  }
  auto mismatch = [&](const char* kind, int64_t l, int64_t r) {
    return MakeError(std::string("lhs ") + kind + " dimension " + std::to_string(l) + " has size " +
                     std::to_string(lhs.dimensions(l)) + " but rhs " + kind + " dimension " +
                     std::to_string(r) + " has size " + std::to_string(rhs.dimensions(r)));
  };
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t l = d.lhs_contracting_dimensions[i], r = d.rhs_contracting_dimensions[i];
    if (!SizesMatch(lhs, l, rhs, r)) return mismatch("contracting", l, r);
  }
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t l = d.lhs_batch_dimensions[i], r = d.rhs_batch_dimensions[i];
    if (!SizesMatch(lhs, l, rhs, r)) return mismatch("batch", l, r);
  }
  std::vector<Dim> dims;
  for (int64_t b : d.lhs_batch_dimensions) dims.push_back(DimOf(lhs, b));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!Contains(d.lhs_batch_dimensions, i) && !Contains(d.lhs_contracting_dimensions, i)) {
      dims.push_back(DimOf(lhs, i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!Contains(d.rhs_batch_dimensions, i) && !Contains(d.rhs_contracting_dimensions, i)) {
      dims.push_back(DimOf(rhs, i));
    }
  }
  const PrimitiveType from = HigherPrecision(lhs.element_type(), rhs.element_type());
  if (!IsArrayType(result_type)) return MakeError("dot result must be an array");
  if (result_type != from && !IsFloatingPoint(from) && BitWidth(result_type) < BitWidth(from)) {
    return MakeError("dot result type " + TypeName(result_type) +
                     " is narrower than the operand type " + TypeName(from));
  }
  return MakeArray(result_type, dims);
}

Result<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                     PrimitiveType element_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(base, "windowed operand"));
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return MakeError("window has " + std::to_string(window.dimensions.size()) +
                     " dimensions but the operand " + Str(base) + " has rank " +
                     std::to_string(base.rank()));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    const std::string where = "window dimension " + std::to_string(i);
    if (w.size <= 0) return MakeError(where + " has non-positive size " + std::to_string(w.size));
    if (w.stride <= 0)
      return MakeError(where + " has non-positive stride " + std::to_string(w.stride));
    if (w.base_dilation < 1 || w.window_dilation < 1) {
      return MakeError(where + " has a dilation factor below 1");
    }
    Dim d = DimOf(base, i);
    if (d.size >= 0) {
      KILN_ASSIGN_OR_RETURN(d.size, WindowOutputSize(d.size, w));
    }
    dims.push_back(d);
  }
  return MakeArray(element_type, dims);
}

Result<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                    const ConvolutionDimensionNumbers& d, const Window& window,
                                    int64_t feature_group_count, int64_t batch_group_count,
                                    PrimitiveType result_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "convolution lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "convolution rhs"));
  if (feature_group_count <= 0 || batch_group_count <= 0) {
    return MakeError("feature_group_count and batch_group_count must be positive");
  }
  if (feature_group_count > 1 && batch_group_count > 1) {
    return MakeError("feature_group_count and batch_group_count cannot both exceed 1");
  }
  if (lhs.rank() != d.input_rank) {
    return MakeError("lhs " + Str(lhs) + " does not have the rank " + std::to_string(d.input_rank) +
                     " of its dimension labels");
  }
  if (rhs.rank() != d.kernel_rank) {
    return MakeError("rhs " + Str(rhs) + " does not have the rank " +
                     std::to_string(d.kernel_rank) + " of its dimension labels");
  }
  const size_t spatial = d.input_spatial_dimensions.size();
  if (window.dimensions.size() != spatial) {
    return MakeError("window has " + std::to_string(window.dimensions.size()) +
                     " dimensions but the convolution has " + std::to_string(spatial) +
                     " spatial dimensions");
  }
  const int64_t in_f = d.input_feature_dimension, in_b = d.input_batch_dimension;
  const int64_t k_i = d.kernel_input_feature_dimension, k_o = d.kernel_output_feature_dimension;
  const bool dyn_in_f = IsDynamicDimension(lhs, in_f), dyn_k_i = IsDynamicDimension(rhs, k_i);
  const bool dyn_k_o = IsDynamicDimension(rhs, k_o), dyn_in_b = IsDynamicDimension(lhs, in_b);
  const int64_t input_features = lhs.dimensions(in_f), kernel_in = rhs.dimensions(k_i);
  const int64_t kernel_out = rhs.dimensions(k_o), input_batch = lhs.dimensions(in_b);
  if (!dyn_in_f && !dyn_k_i &&
      (input_features % feature_group_count != 0 ||
       input_features / feature_group_count != kernel_in)) {
    return MakeError("lhs feature dimension has size " + std::to_string(input_features) +
                     ", which divided by feature_group_count " +
                     std::to_string(feature_group_count) +
                     " must equal the rhs input feature size " + std::to_string(kernel_in));
  }
  if (!dyn_k_o && (kernel_out % feature_group_count != 0 || kernel_out % batch_group_count != 0)) {
    return MakeError("rhs output feature size " + std::to_string(kernel_out) +
                     " must be divisible by feature_group_count " +
                     std::to_string(feature_group_count) + " and batch_group_count " +
                     std::to_string(batch_group_count));
  }
  if (!dyn_in_b && input_batch % batch_group_count != 0) {
    return MakeError("lhs batch size " + std::to_string(input_batch) +
                     " must be divisible by batch_group_count " +
                     std::to_string(batch_group_count));
  }
  std::vector<Dim> base_dims;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kd = d.kernel_spatial_dimensions[i];
    if (!IsDynamicDimension(rhs, kd) && rhs.dimensions(kd) != window.dimensions[i].size) {
      return MakeError("window size " + std::to_string(window.dimensions[i].size) +
                       " of spatial dimension " + std::to_string(i) +
                       " does not match the rhs dimension size " +
                       std::to_string(rhs.dimensions(kd)));
    }
    base_dims.push_back(DimOf(lhs, d.input_spatial_dimensions[i]));
  }
  KILN_ASSIGN_OR_RETURN(Shape base, MakeArray(lhs.element_type(), base_dims));
  KILN_ASSIGN_OR_RETURN(Shape windowed, InferWindowOutputShape(base, window, lhs.element_type()));
  std::vector<Dim> dims(d.output_rank, Dim{kUnboundedDim, true});  // '?' positions stay unknown
  dims[d.output_batch_dimension] = {dyn_in_b ? input_batch : input_batch / batch_group_count,
                                    dyn_in_b};
  dims[d.output_feature_dimension] = {kernel_out, dyn_k_o};
  for (size_t i = 0; i < spatial; ++i) {
    Dim w = DimOf(windowed, static_cast<int64_t>(i));
    if (IsDynamicDimension(rhs, d.kernel_spatial_dimensions[i])) w.dynamic = true;
    dims[d.output_spatial_dimensions[i]] = w;
  }
  const PrimitiveType from = HigherPrecision(lhs.element_type(), rhs.element_type());
  if (!IsArrayType(result_type)) return MakeError("convolution result must be an array");
  if (result_type != from && !IsFloatingPoint(from) && BitWidth(result_type) < BitWidth(from)) {
    return MakeError("convolution result type " + TypeName(result_type) +
                     " is narrower than the operand type " + TypeName(from));
  }
  return MakeArray(result_type, dims);
}

Result<Shape> InferFftShape(const Shape& in, const FftConfig& fft) {
  KILN_RETURN_IF_ERROR(ExpectArray(in, "fft operand"));
  const int64_t n = static_cast<int64_t>(fft.length.size());
  if (n < 1 || n > 3) return MakeError("fft_length must have 1 to 3 entries");
  if (in.rank() < n) return MakeError("fft operand " + Str(in) + " has rank below fft rank");
  const PrimitiveType t = in.element_type();
  std::vector<Dim> dims = DimsOf(in);
  auto inner = [&](int64_t i) { return in.rank() - n + i; };
  switch (fft.type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) return MakeError("FFT/IFFT need a complex operand, got " + Str(in));
      return in;
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return MakeError("RFFT needs an f32 or f64 operand, got " + Str(in));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (!IsDynamicDimension(in, inner(i)) && in.dimensions(inner(i)) != fft.length[i]) {
          return MakeError("RFFT operand dimension " + std::to_string(inner(i)) +
                           " must equal fft_length " + std::to_string(fft.length[i]));
        }
      }
      if (fft.length[n - 1] != 0) dims.back().size = fft.length[n - 1] / 2 + 1;
      return MakeArray(t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128, dims);
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) return MakeError("IRFFT needs a complex operand, got " + Str(in));
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (!IsDynamicDimension(in, inner(i)) && in.dimensions(inner(i)) != fft.length[i]) {
          return MakeError("IRFFT operand dimension " + std::to_string(inner(i)) +
                           " must equal fft_length " + std::to_string(fft.length[i]));
        }
      }
      const int64_t last = in.dimensions(in.rank() - 1);
      if (!IsDynamicDimension(in, in.rank() - 1) && (last != 0 || fft.length[n - 1] != 0) &&
          last != fft.length[n - 1] / 2 + 1) {
        return MakeError("IRFFT innermost dimension must be fft_length/2+1");
      }
      dims.back().size = fft.length[n - 1];
      return MakeArray(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64, dims);
    }
  }
  return MakeError("unknown fft type");
}

// ---- Reductions and calls -----------------------------------------------------

Status VerifyReducer(const ProgramShape& reducer, std::span<const Shape> init_values,
                     std::span<const PrimitiveType> input_types) {
  const size_t n = input_types.size();
  if (reducer.parameters.size() != 2 * n) {
    return MakeError("reducer must take " + std::to_string(2 * n) + " parameters, takes " +
                     std::to_string(reducer.parameters.size()));
  }
  if (init_values.size() != n) {
    return MakeError("expected " + std::to_string(n) + " init values, got " +
                     std::to_string(init_values.size()));
  }
  std::vector<const Shape*> acc;
  if (reducer.result.IsTuple()) {
    for (const Shape& s : reducer.result.tuple_shapes()) acc.push_back(&s);
  } else {
    acc.push_back(&reducer.result);
  }
  if (acc.size() != n || (n != 1 && !reducer.result.IsTuple())) {
    return MakeError("reducer must return " + std::to_string(n) + " scalar(s), returns " +
                     Str(reducer.result));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!IsScalar(*acc[i])) {
      return MakeError("reducer must return scalars, returns " + Str(reducer.result));
    }
    if (!ShapesCompatible(*acc[i], reducer.parameters[i])) {
      return MakeError("reducer parameter " + std::to_string(i) + " " + Str(reducer.parameters[i]) +
                       " differs from its result " + Str(*acc[i]));
    }
    if (!ShapesCompatible(*acc[i], init_values[i], true)) {
      return MakeError("init value " + std::to_string(i) + " " + Str(init_values[i]) +
                       " differs from the reducer result " + Str(*acc[i]));
    }
    const Shape input_scalar(input_types[i], {});
    if (!ShapesCompatible(input_scalar, reducer.parameters[n + i], true) ||
        !ShapesCompatible(*acc[i], reducer.parameters[n + i], true)) {
      return MakeError("reducer parameter " + std::to_string(n + i) + " " +
                       Str(reducer.parameters[n + i]) + " does not match input element type " +
                       TypeName(input_types[i]));
    }
  }
  return Ok();
}

namespace {

// Splits variadic reduce/reduce-window operands into inputs and init values
// and checks the inputs have equal dimensions.
Status SplitReduceOperands(std::span<const Shape> operands, const char* op,
                           std::span<const Shape>* inputs, std::span<const Shape>* inits,
                           std::vector<PrimitiveType>* types) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return MakeError(std::string(op) + " needs an even, non-zero number of operands, has " +
                     std::to_string(operands.size()));
  }
  const size_t n = operands.size() / 2;
  *inputs = operands.first(n);
  *inits = operands.subspan(n);
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectArray((*inputs)[i], std::string(op) + " input"));
    if (!SameDimensions((*inputs)[0], (*inputs)[i])) {
      return MakeError(std::string(op) + " inputs must have equal dimensions, got " +
                       Str((*inputs)[0]) + " and " + Str((*inputs)[i]));
    }
    types->push_back((*inputs)[i].element_type());
  }
  return Ok();
}

// One result per reducer output: a single array or a tuple.
Result<Shape> ReducerResults(const ProgramShape& reducer, const std::vector<Dim>& dims) {
  if (!reducer.result.IsTuple()) return MakeArray(reducer.result.element_type(), dims);
  std::vector<Shape> parts;
  for (const Shape& s : reducer.result.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(Shape part, MakeArray(s.element_type(), dims));
    parts.push_back(std::move(part));
  }
  return Shape::Tuple(std::move(parts));
}

}  // namespace

Result<Shape> InferReduceShape(std::span<const Shape> operands, Dims dimensions,
                               const ProgramShape& reducer) {
  std::span<const Shape> inputs, inits;
  std::vector<PrimitiveType> types;
  KILN_RETURN_IF_ERROR(SplitReduceOperands(operands, "reduce", &inputs, &inits, &types));
  KILN_RETURN_IF_ERROR(CheckDimList(dimensions, inputs[0].rank(), "reduce dimensions"));
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, types));
  std::vector<Dim> dims;
  for (int64_t i = 0; i < inputs[0].rank(); ++i) {
    if (!Contains(dimensions, i)) dims.push_back(DimOf(inputs[0], i));
  }
  return ReducerResults(reducer, dims);
}

Result<Shape> InferReduceWindowShape(std::span<const Shape> operands, const Window& window,
                                     const ProgramShape& reducer) {
  std::span<const Shape> inputs, inits;
  std::vector<PrimitiveType> types;
  KILN_RETURN_IF_ERROR(SplitReduceOperands(operands, "reduce-window", &inputs, &inits, &types));
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, types));
  KILN_ASSIGN_OR_RETURN(Shape out,
                        InferWindowOutputShape(inputs[0], window, inits[0].element_type()));
  return ReducerResults(reducer, DimsOf(out));
}

Result<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                         const Window& window, const Shape& source,
                                         const Shape& init_value, const ProgramShape& scatter) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "select-and-scatter operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(source, "select-and-scatter source"));
  if (select.parameters.size() != 2) {
    return MakeError("select computation must take 2 parameters, takes " +
                     std::to_string(select.parameters.size()));
  }
  if (!ShapesCompatible(select.result, Shape(PrimitiveType::kPred, {}))) {
    return MakeError("select computation must return pred[], returns " + Str(select.result));
  }
  const Shape element(operand.element_type(), {});
  for (const Shape& p : select.parameters) {
    if (!ShapesCompatible(element, p, true)) {
      return MakeError("select computation parameter " + Str(p) +
                       " does not match the operand element type " + Str(element));
    }
  }
  const PrimitiveType source_type = source.element_type();
  KILN_RETURN_IF_ERROR(VerifyReducer(scatter, std::span<const Shape>(&init_value, 1),
                                     std::span<const PrimitiveType>(&source_type, 1)));
  KILN_ASSIGN_OR_RETURN(Shape windowed,
                        InferWindowOutputShape(operand, window, operand.element_type()));
  if (!ShapesCompatible(source, windowed, true)) {
    return MakeError("source " + Str(source) + " does not match the windowed operand shape " +
                     Str(windowed));
  }
  return operand;
}

Result<Shape> InferMapShape(std::span<const Shape> operands, const ProgramShape& to_apply) {
  if (operands.empty()) return MakeError("map needs at least one operand");
  for (const Shape& s : operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(s, "map operand"));
    if (!SameDimensions(s, operands[0])) {
      return MakeError("map operands must have equal dimensions, got " + Str(operands[0]) +
                       " and " + Str(s));
    }
  }
  if (to_apply.parameters.size() != operands.size()) {
    return MakeError("map computation takes " + std::to_string(to_apply.parameters.size()) +
                     " parameters but map has " + std::to_string(operands.size()) + " operands");
  }
  if (!IsScalar(to_apply.result)) {
    return MakeError("map computation must return a scalar, returns " + Str(to_apply.result));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& p = to_apply.parameters[i];
    if (!IsScalar(p) || !SameTypeIgnoringFp(p.element_type(), operands[i].element_type())) {
      return MakeError("map computation parameter " + std::to_string(i) + " " + Str(p) +
                       " does not match operand element type " +
                       TypeName(operands[i].element_type()));
    }
  }
  return MakeArray(to_apply.result.element_type(), DimsOf(operands[0]));
}

Result<Shape> InferSortShape(std::span<const Shape> operands, int64_t dimension,
                             const ProgramShape& comparator) {
  if (operands.empty()) return MakeError("sort needs at least one operand");
  for (const Shape& s : operands) {
    KILN_RETURN_IF_ERROR(ExpectArray(s, "sort operand"));
    if (!SameDimensions(s, operands[0])) {
      return MakeError("sort operands must have equal dimensions, got " + Str(operands[0]) +
                       " and " + Str(s));
    }
  }
  if (!InRange(dimension, operands[0].rank())) {
    return MakeError("sort dimension " + std::to_string(dimension) + " is out of range for " +
                     Str(operands[0]));
  }
  if (!ShapesCompatible(comparator.result, Shape(PrimitiveType::kPred, {}))) {
    return MakeError("sort comparator must return pred[], returns " + Str(comparator.result));
  }
  if (comparator.parameters.size() != 2 * operands.size()) {
    return MakeError("sort comparator must take " + std::to_string(2 * operands.size()) +
                     " parameters, takes " + std::to_string(comparator.parameters.size()));
  }
  for (size_t i = 0; i < comparator.parameters.size(); ++i) {
    const Shape expected(operands[i / 2].element_type(), {});
    if (!ShapesCompatible(expected, comparator.parameters[i], true)) {
      return MakeError("sort comparator parameter " + std::to_string(i) + " is " +
                       Str(comparator.parameters[i]) + ", expected " + Str(expected));
    }
  }
  if (operands.size() == 1) return operands[0];
  return InferTupleShape(operands);
}

namespace {

// Shared by gather and scatter: the index vector dimension and the indices'
// batch dimensions (all dimensions but index_vector_dim, which is implicit
// and of size 1 when it equals the rank).
struct IndexShape {
  std::vector<Dim> batch;  // indices dims without index_vector_dim
  Dim index_vector;        // size of index_vector_dim (1 if implicit)
};

Result<IndexShape> DecomposeIndices(const Shape& indices, int64_t index_vector_dim,
                                    const char* op) {
  KILN_RETURN_IF_ERROR(ExpectArray(indices, std::string(op) + " indices"));
  if (!IsInteger(indices.element_type())) {
    return MakeError(std::string(op) + " indices must be integers, got " + Str(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return MakeError("index_vector_dim " + std::to_string(index_vector_dim) +
                     " is out of range for indices " + Str(indices));
  }
  IndexShape out{{}, {1, false}};
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i == index_vector_dim) {
      out.index_vector = DimOf(indices, i);
    } else {
      out.batch.push_back(DimOf(indices, i));
    }
  }
  return out;
}

// Batching dims: operand-side list and indices-side list must pair up with
// equal sizes, and must not be index_vector_dim.
Status CheckBatchingDims(const Shape& operand, Dims operand_dims, const Shape& indices,
                         Dims index_dims, int64_t index_vector_dim, const char* op_side,
                         const char* index_side) {
  KILN_RETURN_IF_ERROR(CheckDimList(operand_dims, operand.rank(), op_side, /*sorted=*/true));
  KILN_RETURN_IF_ERROR(CheckDimList(index_dims, indices.rank(), index_side));
  if (operand_dims.size() != index_dims.size()) {
    return MakeError(std::string(op_side) + " and " + index_side + " must have equal length");
  }
  for (size_t i = 0; i < index_dims.size(); ++i) {
    if (index_dims[i] == index_vector_dim) {
      return MakeError(std::string(index_side) + " must not contain index_vector_dim");
    }
    if (!SizesMatch(operand, operand_dims[i], indices, index_dims[i])) {
      return MakeError("operand batching dimension " + std::to_string(operand_dims[i]) +
                       " has size " + std::to_string(operand.dimensions(operand_dims[i])) +
                       " but indices batching dimension " + std::to_string(index_dims[i]) +
                       " has size " + std::to_string(indices.dimensions(index_dims[i])));
    }
  }
  return Ok();
}

// The index vector must have one entry per mapped operand dimension.
Status CheckIndexMap(Dims map, const Dim& index_vector, const Shape& operand, Dims batching,
                     const char* name) {
  if (!index_vector.dynamic && static_cast<int64_t>(map.size()) != index_vector.size) {
    return MakeError(std::string(name) + " " + Join(map) + " has " + std::to_string(map.size()) +
                     " entries but the index vector has size " + std::to_string(index_vector.size));
  }
  KILN_RETURN_IF_ERROR(CheckDimList(map, operand.rank(), name));
  for (int64_t d : map) {
    if (Contains(batching, d)) {
      return MakeError(std::string(name) + " must not contain batching dimension " +
                       std::to_string(d));
    }
  }
  return Ok();
}

}  // namespace

Result<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                               const GatherDimensionNumbers& d, Dims slice_sizes) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "gather operand"));
  KILN_ASSIGN_OR_RETURN(IndexShape idx,
                        DecomposeIndices(start_indices, d.index_vector_dim, "gather"));
  const int64_t out_rank = static_cast<int64_t>(d.offset_dims.size() + idx.batch.size());
  KILN_RETURN_IF_ERROR(CheckDimList(d.offset_dims, out_rank, "offset_dims", /*sorted=*/true));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims", true));
  KILN_RETURN_IF_ERROR(CheckBatchingDims(operand, d.operand_batching_dims, start_indices,
                                         d.start_indices_batching_dims, d.index_vector_dim,
                                         "operand_batching_dims", "start_indices_batching_dims"));
  KILN_RETURN_IF_ERROR(CheckIndexMap(d.start_index_map, idx.index_vector, operand,
                                     d.operand_batching_dims, "start_index_map"));
  for (int64_t c : d.collapsed_slice_dims) {
    if (Contains(d.operand_batching_dims, c)) {
      return MakeError("dimension " + std::to_string(c) + " is both collapsed and batching");
    }
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return MakeError("slice_sizes " + Join(slice_sizes) +
                     " must have one entry per operand dimension of " + Str(operand));
  }
  if (slice_sizes.size() !=
      d.offset_dims.size() + d.collapsed_slice_dims.size() + d.operand_batching_dims.size()) {
    return MakeError(
        "offset_dims, collapsed_slice_dims and operand_batching_dims must "
        "together cover the operand rank " +
        std::to_string(operand.rank()));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 ||
        (!IsDynamicDimension(operand, i) && slice_sizes[i] > operand.dimensions(i))) {
      return MakeError("slice size " + std::to_string(slice_sizes[i]) + " of dimension " +
                       std::to_string(i) + " is out of range for operand " + Str(operand));
    }
    if ((Contains(d.collapsed_slice_dims, i) || Contains(d.operand_batching_dims, i)) &&
        slice_sizes[i] > 1) {
      return MakeError("collapsed or batching dimension " + std::to_string(i) +
                       " must have slice size 0 or 1, has " + std::to_string(slice_sizes[i]));
    }
  }
  std::vector<Dim> dims;
  int64_t operand_dim = 0;
  size_t batch_dim = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (Contains(d.offset_dims, i)) {
      while (Contains(d.collapsed_slice_dims, operand_dim) ||
             Contains(d.operand_batching_dims, operand_dim)) {
        ++operand_dim;
      }
      const int64_t size = slice_sizes[operand_dim];
      dims.push_back({size, size == operand.dimensions(operand_dim) &&
                                IsDynamicDimension(operand, operand_dim)});
      ++operand_dim;
    } else {
      dims.push_back(idx.batch[batch_dim++]);
    }
  }
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferScatterShape(std::span<const Shape> operands, const ScatterDimensionNumbers& d,
                                const ProgramShape& reducer) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return MakeError("scatter needs 2N+1 operands (N >= 1), has " +
                     std::to_string(operands.size()));
  }
  const size_t n = operands.size() / 2;
  const Shape& indices = operands[n];
  KILN_ASSIGN_OR_RETURN(IndexShape idx, DecomposeIndices(indices, d.index_vector_dim, "scatter"));
  std::vector<Shape> inits;
  std::vector<PrimitiveType> update_types;
  for (size_t k = 0; k < n; ++k) {
    const Shape& operand = operands[k];
    const Shape& updates = operands[n + 1 + k];
    KILN_RETURN_IF_ERROR(ExpectArray(operand, "scatter operand"));
    KILN_RETURN_IF_ERROR(ExpectArray(updates, "scatter updates"));
    if (!SameDimensions(operand, operands[0]) || !SameDimensions(updates, operands[n + 1])) {
      return MakeError("scatter operands (and updates) must have equal dimensions");
    }
    KILN_RETURN_IF_ERROR(
        CheckDimList(d.update_window_dims, updates.rank(), "update_window_dims", true));
    KILN_RETURN_IF_ERROR(
        CheckDimList(d.inserted_window_dims, operand.rank(), "inserted_window_dims", true));
    KILN_RETURN_IF_ERROR(CheckBatchingDims(operand, d.input_batching_dims, indices,
                                           d.scatter_indices_batching_dims, d.index_vector_dim,
                                           "input_batching_dims", "scatter_indices_batching_dims"));
    for (int64_t c : d.inserted_window_dims) {
      if (Contains(d.input_batching_dims, c)) {
        return MakeError("dimension " + std::to_string(c) + " is both inserted and batching");
      }
    }
    if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                             d.input_batching_dims.size()) != operand.rank()) {
      return MakeError(
          "update_window_dims, inserted_window_dims and input_batching_dims must "
          "together cover the operand rank " +
          std::to_string(operand.rank()));
    }
    KILN_RETURN_IF_ERROR(CheckIndexMap(d.scatter_dims_to_operand_dims, idx.index_vector, operand,
                                       d.input_batching_dims, "scatter_dims_to_operand_dims"));
    const int64_t expected_rank =
        static_cast<int64_t>(idx.batch.size() + d.update_window_dims.size());
    if (updates.rank() != expected_rank) {
      return MakeError("updates " + Str(updates) + " must have rank " +
                       std::to_string(expected_rank));
    }
    int64_t operand_dim = 0;
    size_t window = 0, batch = 0;
    for (int64_t i = 0; i < updates.rank(); ++i) {
      if (window < d.update_window_dims.size() && d.update_window_dims[window] == i) {
        ++window;
        while (Contains(d.inserted_window_dims, operand_dim) ||
               Contains(d.input_batching_dims, operand_dim)) {
          ++operand_dim;
        }
        if (!IsDynamicDimension(updates, i) && !IsDynamicDimension(operand, operand_dim) &&
            updates.dimensions(i) > operand.dimensions(operand_dim)) {
          return MakeError("updates window dimension " + std::to_string(i) + " has size " +
                           std::to_string(updates.dimensions(i)) +
                           ", larger than operand dimension " + std::to_string(operand_dim) +
                           " of size " + std::to_string(operand.dimensions(operand_dim)));
        }
        ++operand_dim;
      } else {
        const Dim& b = idx.batch[batch++];
        if (!IsDynamicDimension(updates, i) && !b.dynamic && updates.dimensions(i) != b.size) {
          return MakeError("updates scatter dimension " + std::to_string(i) + " has size " +
                           std::to_string(updates.dimensions(i)) +
                           " but the matching indices dimension has size " +
                           std::to_string(b.size));
        }
      }
    }
    inits.push_back(Shape(operand.element_type(), {}));
    update_types.push_back(updates.element_type());
  }
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, update_types));
  if (n == 1) return operands[0];
  return InferTupleShape(operands.first(n));
}

// ---- Linear algebra and normalisation ------------------------------------------

Result<Shape> InferCholeskyShape(const Shape& a) {
  KILN_RETURN_IF_ERROR(ExpectArray(a, "cholesky operand"));
  if (!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) {
    return MakeError("cholesky needs a floating-point or complex operand, got " + Str(a));
  }
  if (a.rank() < 2 || !SizesMatch(a, a.rank() - 2, a, a.rank() - 1)) {
    return MakeError("cholesky operand " + Str(a) + " must end in a square matrix");
  }
  return a;
}

Result<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                        const TriangularSolveOptions& options) {
  KILN_RETURN_IF_ERROR(InferCholeskyShape(a));
  KILN_RETURN_IF_ERROR(ExpectArray(b, "triangular-solve b"));
  if (a.element_type() != b.element_type() || a.rank() != b.rank()) {
    return MakeError("triangular-solve operands " + Str(a) + " and " + Str(b) +
                     " must have equal rank and element type");
  }
  const int64_t r = a.rank();
  if (!SizesMatch(a, r - 1, b, options.left_side ? r - 2 : r - 1)) {
    return MakeError("triangular-solve shared dimension of " + Str(a) + " and " + Str(b) +
                     " does not match");
  }
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (!SizesMatch(a, i, b, i)) {
      return MakeError("triangular-solve batch dimensions of " + Str(a) + " and " + Str(b) +
                       " differ");
    }
  }
  return b;
}

Result<Shape> InferTopKShape(const Shape& operand, int64_t k) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "topk operand"));
  if (operand.rank() < 1) return MakeError("topk operand must have rank >= 1");
  const int64_t last = operand.rank() - 1;
  if (k < 0 || (!IsDynamicDimension(operand, last) && operand.dimensions(last) < k)) {
    return MakeError("topk k=" + std::to_string(k) + " is out of range for " + Str(operand));
  }
  std::vector<Dim> dims = DimsOf(operand);
  dims.back() = {k, false};
  KILN_ASSIGN_OR_RETURN(Shape values, MakeArray(operand.element_type(), dims));
  KILN_ASSIGN_OR_RETURN(Shape indices, MakeArray(PrimitiveType::kS32, dims));
  return Shape::Tuple({values, indices});
}

Result<Shape> InferBatchNormShape(Opcode opcode, std::span<const Shape> operands,
                                  int64_t feature_index) {
  const size_t expected = opcode == Opcode::kBatchNormTraining ? 3 : 5;
  if (operands.size() != expected) {
    return MakeError(std::string(OpcodeName(opcode)) + " takes " + std::to_string(expected) +
                     " operands");
  }
  const Shape& operand = operands[0];
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "batch-norm operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return MakeError("batch-norm operand must be floating-point, got " + Str(operand));
  }
  if (!InRange(feature_index, operand.rank())) {
    return MakeError("feature_index " + std::to_string(feature_index) + " is out of range for " +
                     Str(operand));
  }
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& s = operands[i];
    const bool full = opcode == Opcode::kBatchNormGrad && i == 4;  // grad_output
    KILN_RETURN_IF_ERROR(ExpectArray(s, "batch-norm operand " + std::to_string(i)));
    if (!SameTypeIgnoringFp(s.element_type(), operand.element_type())) {
      return MakeError("batch-norm operand " + std::to_string(i) + " " + Str(s) +
                       " does not match the element type of " + Str(operand));
    }
    if (full ? !SameDimensions(s, operand)
             : (s.rank() != 1 || !SizesMatch(s, 0, operand, feature_index))) {
      return MakeError("batch-norm operand " + std::to_string(i) + " " + Str(s) +
                       " does not match the feature dimension of " + Str(operand));
    }
  }
  if (opcode == Opcode::kBatchNormInference) return operand;
  KILN_ASSIGN_OR_RETURN(Shape feature,
                        MakeArray(operand.element_type(), {DimOf(operand, feature_index)}));
  return Shape::Tuple({operand, feature, feature});
}

// ---- Instructions ---------------------------------------------------------------

namespace {

Status ExpectSameShape(const Shape& actual, const Shape& expected, const std::string& what) {
  if (!ShapesCompatible(actual, expected)) {
    return MakeError(what + " " + actual.ToString() + " does not match " + expected.ToString());
  }
  return Ok();
}

Result<ProgramShape> CalleeShape(const Instruction& instr, std::string_view attr) {
  KILN_ASSIGN_OR_RETURN(const Computation* c, GetCalledComputation(instr, attr));
  return GetProgramShape(*c);
}

Result<Shape> InferWhile(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(ProgramShape cond, CalleeShape(instr, "condition"));
  KILN_ASSIGN_OR_RETURN(ProgramShape body, CalleeShape(instr, "body"));
  if (cond.parameters.size() != 1 || body.parameters.size() != 1) {
    return MakeError("while condition and body must take exactly one parameter");
  }
  if (!ShapesCompatible(cond.result, Shape(PrimitiveType::kPred, {}))) {
    return MakeError("while condition must return pred[], returns " + cond.result.ToString());
  }
  const Shape& init = instr.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectSameShape(init, body.parameters[0], "operand"));
  KILN_RETURN_IF_ERROR(ExpectSameShape(init, cond.parameters[0], "operand"));
  KILN_RETURN_IF_ERROR(ExpectSameShape(body.result, body.parameters[0], "body result"));
  return body.result;
}

Result<Shape> InferConditional(const Instruction& instr) {
  std::vector<const Computation*> branches;
  if (instr.FindAttribute("branch_computations") != nullptr) {
    KILN_ASSIGN_OR_RETURN(branches, GetCalledComputations(instr, "branch_computations"));
  } else {
    KILN_ASSIGN_OR_RETURN(const Computation* t, GetCalledComputation(instr, "true_computation"));
    KILN_ASSIGN_OR_RETURN(const Computation* f, GetCalledComputation(instr, "false_computation"));
    branches = {t, f};
  }
  const Shape& selector = instr.operand(0)->shape();
  const bool scalar = IsScalar(selector);
  if (scalar && selector.element_type() == PrimitiveType::kPred) {
    if (branches.size() != 2) return MakeError("a pred selector needs exactly 2 branches");
  } else if (!scalar || selector.element_type() != PrimitiveType::kS32) {
    return MakeError("selector must be pred[] or s32[], got " + selector.ToString());
  }
  if (branches.empty()) return MakeError("conditional has no branches");
  if (instr.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return MakeError("conditional with " + std::to_string(branches.size()) + " branches needs " +
                     std::to_string(branches.size() + 1) + " operands, has " +
                     std::to_string(instr.operand_count()));
  }
  Shape result;
  for (size_t j = 0; j < branches.size(); ++j) {
    KILN_ASSIGN_OR_RETURN(ProgramShape b, GetProgramShape(*branches[j]));
    if (b.parameters.size() != 1) {
      return MakeError("branch %" + branches[j]->name() + " must take one parameter");
    }
    KILN_RETURN_IF_ERROR(ExpectSameShape(instr.operand(j + 1)->shape(), b.parameters[0],
                                         "operand " + std::to_string(j + 1)));
    if (j == 0) {
      result = b.result;
    } else {
      KILN_RETURN_IF_ERROR(
          ExpectSameShape(b.result, result, "result of branch %" + branches[j]->name()));
    }
  }
  return result;
}

// call and fusion: parameters match operands, the root is the result.
// Fusions may leave trailing operands unused, as XLA allows.
Result<Shape> InferCallLike(const Instruction& instr, std::string_view attr, bool fewer_params_ok) {
  KILN_ASSIGN_OR_RETURN(const Computation* c, GetCalledComputation(instr, attr));
  KILN_ASSIGN_OR_RETURN(ProgramShape ps, GetProgramShape(*c));
  const size_t n = ps.parameters.size(), ops = static_cast<size_t>(instr.operand_count());
  if (fewer_params_ok ? n > ops : n != ops) {
    return MakeError("computation %" + c->name() + " takes " + std::to_string(n) +
                     " parameters but the instruction has " + std::to_string(ops) + " operands");
  }
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectSameShape(instr.operand(i)->shape(), ps.parameters[i],
                        "operand " + std::to_string(i) + " (parameter of %" + c->name() + ")"));
  }
  return ps.result;
}

}  // namespace

Result<Shape> InferInstructionShape(const Instruction& instr, const Shape* declared) {
  const Opcode op = instr.opcode();
  for (const Instruction* operand : instr.operands()) {
    if (operand == nullptr) return MakeError("has a null operand");
  }
  // Operand shapes by reference (a get-tuple-element must not copy a large
  // tuple); all() copies them for the variadic rules.
  struct Operands {
    const Instruction& instr;
    const Shape& operator[](size_t i) const { return instr.operand(i)->shape(); }
    size_t size() const { return static_cast<size_t>(instr.operand_count()); }
    std::vector<Shape> all(size_t from = 0) const {
      std::vector<Shape> out;
      for (size_t i = from; i < size(); ++i) out.push_back((*this)[i]);
      return out;
    }
  } ops{instr};
  auto need = [&](size_t n) -> Status {
    if (ops.size() < n) {
      return MakeError(std::string(OpcodeName(op)) + " needs " + std::to_string(n) +
                       " operand(s), has " + std::to_string(ops.size()));
    }
    return Ok();
  };
  auto needs_declared = [&]() -> Result<Shape> {
    return MakeError("the shape of " + std::string(OpcodeName(op)) +
                     " cannot be inferred; it must be written");
  };
  const bool have_type = declared != nullptr && declared->IsArray();
  const PrimitiveType declared_type =
      have_type ? declared->element_type() : PrimitiveType::kInvalid;
  auto preferred = [&](const Shape& a, const Shape& b) {
    return have_type ? declared_type : HigherPrecision(a.element_type(), b.element_type());
  };
  switch (CategoryOf(op)) {
    case OpcodeCategory::kUnary:
      KILN_RETURN_IF_ERROR(need(1));
      if (op == Opcode::kConvert) {
        if (declared == nullptr) return needs_declared();
        return InferConvertShape(ops[0], declared->element_type());
      }
      if (op == Opcode::kReducePrecision) {
        KILN_ASSIGN_OR_RETURN(ReducePrecisionConfig c, GetReducePrecisionConfig(instr));
        return InferReducePrecisionShape(ops[0], c.exponent_bits, c.mantissa_bits);
      }
      return InferUnaryShape(op, ops[0]);
    case OpcodeCategory::kBinary:
      KILN_RETURN_IF_ERROR(need(2));
      return InferBinaryShape(op, ops[0], ops[1]);
    case OpcodeCategory::kTernary:
      KILN_RETURN_IF_ERROR(need(3));
      if (op == Opcode::kClamp) return InferClampShape(ops[0], ops[1], ops[2]);
      return InferSelectShape(ops[0], ops[1], ops[2]);
    case OpcodeCategory::kCollective:
      if (declared == nullptr) return needs_declared();
      return *declared;
    case OpcodeCategory::kOther:
      break;
  }
  switch (op) {
    case Opcode::kBitcastConvert:
      KILN_RETURN_IF_ERROR(need(1));
      if (declared == nullptr) return needs_declared();
      return InferBitcastConvertShape(ops[0], declared->element_type());
    case Opcode::kStochasticConvert:
      KILN_RETURN_IF_ERROR(need(2));
      if (declared == nullptr) return needs_declared();
      return InferStochasticConvertShape(ops[0], ops[1], declared->element_type());
    case Opcode::kBroadcast: {
      KILN_RETURN_IF_ERROR(need(1));
      std::vector<int64_t> dims;
      if (instr.FindAttribute("dimensions") != nullptr || !IsScalar(ops[0])) {
        KILN_ASSIGN_OR_RETURN(dims, GetDimensions(instr));  // optional for scalars
      }
      if (declared != nullptr) return InferBroadcastShape(ops[0], *declared, dims);
      // XLA's parser reads `dimensions` as sizes prepended to the operand's.
      KILN_RETURN_IF_ERROR(ExpectArray(ops[0], "broadcast operand"));
      std::vector<Dim> out;
      for (int64_t d : dims) {
        if (d < 0) return MakeError("broadcast size " + std::to_string(d) + " is negative");
        out.push_back({d, false});
      }
      for (const Dim& d : DimsOf(ops[0])) out.push_back(d);
      return MakeArray(ops[0].element_type(), out);
    }
    case Opcode::kReshape:
      KILN_RETURN_IF_ERROR(need(1));
      if (declared == nullptr) return needs_declared();
      return InferReshapeShape(ops[0], *declared);
    case Opcode::kDynamicReshape: {
      KILN_RETURN_IF_ERROR(need(1));
      if (declared == nullptr) return needs_declared();
      if (!declared->IsArray() || static_cast<int64_t>(ops.size()) != declared->rank() + 1) {
        return MakeError("dynamic-reshape needs one size operand per result dimension");
      }
      for (size_t i = 1; i < ops.size(); ++i) {
        if (!ShapesCompatible(ops[i], Shape(PrimitiveType::kS32, {}))) {
          return MakeError("dynamic-reshape sizes must be s32[], got " + Str(ops[i]));
        }
      }
      return InferReshapeShape(ops[0], *declared);
    }
    case Opcode::kTranspose: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetDimensions(instr));
      return InferTransposeShape(ops[0], dims);
    }
    case Opcode::kReverse: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetDimensions(instr));
      return InferReverseShape(ops[0], dims);
    }
    case Opcode::kSlice: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(SliceSpec spec, GetSliceSpec(instr));
      return InferSliceShape(ops[0], spec);
    }
    case Opcode::kDynamicSlice: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, GetDynamicSliceSizes(instr));
      return InferDynamicSliceShape(ops[0], ops.all(1), sizes);
    }
    case Opcode::kDynamicUpdateSlice:
      KILN_RETURN_IF_ERROR(need(2));
      return InferDynamicUpdateSliceShape(ops[0], ops[1], ops.all(2));
    case Opcode::kConcatenate: {
      KILN_ASSIGN_OR_RETURN(int64_t dim, GetSingleDimension(instr));
      return InferConcatenateShape(ops.all(), dim);
    }
    case Opcode::kPad: {
      KILN_RETURN_IF_ERROR(need(2));
      KILN_ASSIGN_OR_RETURN(PaddingConfig padding, GetPaddingConfig(instr));
      return InferPadShape(ops[0], ops[1], padding);
    }
    case Opcode::kIota: {
      if (declared == nullptr) return needs_declared();
      KILN_ASSIGN_OR_RETURN(int64_t dim, GetIotaDimension(instr));
      return InferIotaShape(*declared, dim);
    }
    case Opcode::kGetTupleElement: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(int64_t index, GetTupleIndex(instr));
      return InferGetTupleElementShape(ops[0], index);
    }
    case Opcode::kTuple:
      return InferTupleShape(ops.all());
    case Opcode::kGetDimensionSize: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(int64_t dim, GetSingleDimension(instr));
      return InferGetDimensionSizeShape(ops[0], dim);
    }
    case Opcode::kSetDimensionSize: {
      KILN_RETURN_IF_ERROR(need(2));
      KILN_ASSIGN_OR_RETURN(int64_t dim, GetSingleDimension(instr));
      return InferSetDimensionSizeShape(ops[0], ops[1], dim);
    }
    case Opcode::kDot: {
      KILN_RETURN_IF_ERROR(need(2));
      if (instr.FindAttribute("sparsity") != nullptr) {  // sparse dot: not inferred
        if (declared == nullptr) return needs_declared();
        return *declared;
      }
      KILN_ASSIGN_OR_RETURN(DotDimensionNumbers dnums, GetDotDimensionNumbers(instr));
      return InferDotShape(ops[0], ops[1], dnums, preferred(ops[0], ops[1]));
    }
    case Opcode::kConvolution: {
      KILN_RETURN_IF_ERROR(need(2));
      KILN_ASSIGN_OR_RETURN(ConvolutionDimensionNumbers dnums,
                            GetConvolutionDimensionNumbers(instr));
      KILN_ASSIGN_OR_RETURN(Window window, GetWindow(instr));
      KILN_ASSIGN_OR_RETURN(int64_t fgc, GetFeatureGroupCount(instr));
      KILN_ASSIGN_OR_RETURN(int64_t bgc, GetBatchGroupCount(instr));
      return InferConvolutionShape(ops[0], ops[1], dnums, window, fgc, bgc,
                                   preferred(ops[0], ops[1]));
    }
    case Opcode::kFft: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(FftConfig fft, GetFftConfig(instr));
      return InferFftShape(ops[0], fft);
    }
    case Opcode::kReduce: {
      KILN_ASSIGN_OR_RETURN(ProgramShape reducer, CalleeShape(instr, "to_apply"));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetDimensions(instr));
      return InferReduceShape(ops.all(), dims, reducer);
    }
    case Opcode::kReduceWindow: {
      KILN_ASSIGN_OR_RETURN(ProgramShape reducer, CalleeShape(instr, "to_apply"));
      KILN_ASSIGN_OR_RETURN(Window window, GetWindow(instr));
      return InferReduceWindowShape(ops.all(), window, reducer);
    }
    case Opcode::kSelectAndScatter: {
      KILN_RETURN_IF_ERROR(need(3));
      KILN_ASSIGN_OR_RETURN(ProgramShape select, CalleeShape(instr, "select"));
      KILN_ASSIGN_OR_RETURN(ProgramShape scatter, CalleeShape(instr, "scatter"));
      KILN_ASSIGN_OR_RETURN(Window window, GetWindow(instr));
      return InferSelectAndScatterShape(ops[0], select, window, ops[1], ops[2], scatter);
    }
    case Opcode::kMap: {
      KILN_ASSIGN_OR_RETURN(ProgramShape fn, CalleeShape(instr, "to_apply"));
      return InferMapShape(ops.all(), fn);
    }
    case Opcode::kSort: {
      KILN_ASSIGN_OR_RETURN(ProgramShape cmp, CalleeShape(instr, "to_apply"));
      KILN_ASSIGN_OR_RETURN(SortConfig config, GetSortConfig(instr));
      return InferSortShape(ops.all(), config.dimension, cmp);
    }
    case Opcode::kGather: {
      KILN_RETURN_IF_ERROR(need(2));
      KILN_ASSIGN_OR_RETURN(GatherDimensionNumbers dnums, GetGatherDimensionNumbers(instr));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, GetGatherSliceSizes(instr));
      return InferGatherShape(ops[0], ops[1], dnums, sizes);
    }
    case Opcode::kScatter: {
      KILN_ASSIGN_OR_RETURN(ProgramShape reducer, CalleeShape(instr, "to_apply"));
      KILN_ASSIGN_OR_RETURN(ScatterDimensionNumbers dnums, GetScatterDimensionNumbers(instr));
      return InferScatterShape(ops.all(), dnums, reducer);
    }
    case Opcode::kWhile:
      KILN_RETURN_IF_ERROR(need(1));
      return InferWhile(instr);
    case Opcode::kConditional:
      KILN_RETURN_IF_ERROR(need(1));
      return InferConditional(instr);
    case Opcode::kCall:
      return InferCallLike(instr, "to_apply", /*fewer_params_ok=*/false);
    case Opcode::kFusion:
      return InferCallLike(instr, "calls", /*fewer_params_ok=*/true);
    case Opcode::kConstant:
      if (instr.literal() == nullptr) return MakeError("constant has no literal");
      return instr.literal()->shape();
    case Opcode::kAfterAll:
      return Shape::Token();
    case Opcode::kAddDependency:
      KILN_RETURN_IF_ERROR(need(2));
      if (!ops[1].IsToken()) return MakeError("add-dependency operand 1 must be a token");
      return ops[0];
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      KILN_RETURN_IF_ERROR(need(1));
      return ops[0];
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Shape(PrimitiveType::kU32, {});
    case Opcode::kRngGetAndUpdateState:
      return Shape(PrimitiveType::kU64, {2});
    case Opcode::kCholesky:
      KILN_RETURN_IF_ERROR(need(1));
      return InferCholeskyShape(ops[0]);
    case Opcode::kTriangularSolve: {
      KILN_RETURN_IF_ERROR(need(2));
      KILN_ASSIGN_OR_RETURN(TriangularSolveOptions o, GetTriangularSolveOptions(instr));
      return InferTriangularSolveShape(ops[0], ops[1], o);
    }
    case Opcode::kTopK: {
      KILN_RETURN_IF_ERROR(need(1));
      KILN_ASSIGN_OR_RETURN(TopKConfig c, GetTopKConfig(instr));
      return InferTopKShape(ops[0], c.k);
    }
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      KILN_ASSIGN_OR_RETURN(BatchNormConfig c, GetBatchNormConfig(instr));
      return InferBatchNormShape(op, ops.all(), c.feature_index);
    }
    default:  // parameter, rng, custom-call, async, send/recv, infeed/outfeed, ...
      if (declared == nullptr) return needs_declared();
      return *declared;
  }
}

}  // namespace kiln::hlo
