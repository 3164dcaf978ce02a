#include "runtime/eval/shape_ops.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/element_traits.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/literal_convert.h"
#include "runtime/eval/strided_copy.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Literal;

int64_t Width(const hlo::Shape& shape) { return hlo::HostByteWidth(shape.element_type()); }

// Row-major byte strides of an array shape.
std::vector<int64_t> ByteStrides(const hlo::Shape& shape) {
  std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  for (int64_t& s : strides) s *= Width(shape);
  return strides;
}

Status CheckElements(const Instruction& instr, const Literal& lit, int64_t expected) {
  if (lit.elided()) return std::unexpected(InstrError(instr, "operand has no data ({...})"));
  if (lit.element_count() != expected) {
    return std::unexpected(InstrError(instr, "operand has " + std::to_string(lit.element_count()) +
                                                 " elements, expected " + std::to_string(expected)));
  }
  return Ok();
}

// `in` in the element type of `instr`'s result: `in` itself, or its
// conversion, kept alive in `converted`. The ops below move bytes, so an
// operand of another type (mixed precision, which the verifier allows as
// XLA's does) is converted first; moving a bf16 buffer as f32 elements would
// read past its end. An operand without data is left to CheckElements.
Result<const Literal*> InResultType(const Instruction& instr, const Literal& in,
                                    std::deque<Literal>& converted) {
  const hlo::PrimitiveType to = instr.shape().element_type();
  if (in.shape().element_type() == to || in.elided()) return &in;
  Result<Literal> result = ConvertLiteral(in, to);
  if (!result) return std::unexpected(InstrError(instr, result.error().message));
  converted.push_back(std::move(*result));
  return &converted.back();
}

// Physical element order of `shape` under its layout, as a permutation of
// logical dimensions from major to minor.
std::vector<int64_t> MajorToMinor(const hlo::Shape& shape) {
  const auto& m2m = shape.layout().minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    std::vector<int64_t> identity(shape.rank());
    for (int64_t i = 0; i < shape.rank(); ++i) identity[i] = i;
    return identity;
  }
  return {m2m.rbegin(), m2m.rend()};
}

}  // namespace

Result<int64_t> ScalarToInt64(const Literal& literal) { return IntegerElement(literal, 0); }

Result<int64_t> IntegerElement(const Literal& literal, int64_t i) {
  if (literal.elided() || literal.element_count() <= i) {
    return InvalidArgumentError("expected an integer value with data");
  }
  return DispatchElementType(
      literal.shape().element_type(),
      [&](auto traits) -> Result<int64_t> {
        using Tr = decltype(traits);
        if constexpr (Tr::kKind == ElementKind::kSigned || Tr::kKind == ElementKind::kUnsigned ||
                      Tr::kKind == ElementKind::kPred) {
          return static_cast<int64_t>(literal.Get<typename Tr::Stored>(i));
        } else {
          return InvalidArgumentError("expected an integer scalar, got " +
                                      std::string(hlo::PrimitiveTypeName(Tr::kPrimitiveType)));
        }
      },
      []() -> Result<int64_t> { return InvalidArgumentError("expected an integer scalar"); });
}

Result<Literal> EvalBroadcast(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::GetDimensions(instr));
  const hlo::Shape& out_shape = instr.shape();
  if (static_cast<int64_t>(dims.size()) != in.shape().rank()) {
    return std::unexpected(InstrError(instr, "dimensions has " + std::to_string(dims.size()) +
                                                 " entries for an operand of rank " +
                                                 std::to_string(in.shape().rank())));
  }
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, in.shape().ElementCount()));
  StridedBox box;
  box.dims = out_shape.dimensions();
  box.dst_strides = ByteStrides(out_shape);
  box.src_strides.assign(box.dims.size(), 0);
  const std::vector<int64_t> in_strides = ByteStrides(in.shape());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= out_shape.rank() ||
        out_shape.dimensions(dims[i]) != in.shape().dimensions(i)) {
      return std::unexpected(InstrError(instr, "dimensions maps operand dimension " +
                                                   std::to_string(i) + " badly"));
    }
    box.src_strides[dims[i]] = in_strides[i];
  }
  Literal out(out_shape);
  CopyStrided(box, in.data().data(), out.mutable_data().data(), Width(out_shape));
  return out;
}

Result<Literal> EvalReshape(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, instr.shape().ElementCount()));
  return Literal::FromData(instr.shape(), in.data());
}

Result<Literal> EvalBitcast(const Instruction& instr, LiteralSpan operands) {
  const Literal& in = *operands[0];
  // The declared operand shape carries the layout; literals are row-major.
  const hlo::Shape& from = instr.operand(0)->shape();
  const hlo::Shape& to = instr.shape();
  if (from.ByteSize() != to.ByteSize()) {
    return std::unexpected(InstrError(instr, "bitcast from " + from.ToString() + " to " +
                                                 to.ToString() + " changes the byte size"));
  }
  const std::vector<int64_t> from_order = MajorToMinor(from);
  const std::vector<int64_t> to_order = MajorToMinor(to);
  auto is_identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  if (is_identity(from_order) && is_identity(to_order)) {
    return Literal::FromData(to, in.data());
  }
  // Lay the operand out physically (its layout), then read those bytes under
  // the result's layout. Tiling is not modelled.
  const int64_t width = Width(from);
  std::vector<uint8_t> physical(in.data().size());
  {
    StridedBox box;
    const std::vector<int64_t> strides = ByteStrides(from);
    for (int64_t d : from_order) {
      box.dims.push_back(from.dimensions(d));
      box.src_strides.push_back(strides[d]);
    }
    box.dst_strides = RowMajorStrides(box.dims);
    for (int64_t& s : box.dst_strides) s *= width;
    CopyStrided(box, in.data().data(), physical.data(), width);
  }
  Literal out(to);
  StridedBox box;
  const std::vector<int64_t> out_strides = ByteStrides(to);
  std::vector<int64_t> physical_dims;
  for (int64_t d : to_order) physical_dims.push_back(to.dimensions(d));
  std::vector<int64_t> physical_strides = RowMajorStrides(physical_dims);
  for (size_t i = 0; i < to_order.size(); ++i) {
    box.dims.push_back(physical_dims[i]);
    box.src_strides.push_back(physical_strides[i] * Width(to));
    box.dst_strides.push_back(out_strides[to_order[i]]);
  }
  CopyStrided(box, physical.data(), out.mutable_data().data(), Width(to));
  return out;
}

Result<Literal> EvalTranspose(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, hlo::GetDimensions(instr));
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(perm.size()) != rank) {
    return std::unexpected(InstrError(instr, "dimensions is not a permutation of the operand's"));
  }
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, in.shape().ElementCount()));
  const std::vector<int64_t> in_strides = ByteStrides(in.shape());
  StridedBox box;
  box.dims = instr.shape().dimensions();
  box.dst_strides = ByteStrides(instr.shape());
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || box.dims[i] != in.shape().dimensions(perm[i])) {
      return std::unexpected(InstrError(instr, "dimensions is not a permutation of the operand's"));
    }
    box.src_strides.push_back(in_strides[perm[i]]);
  }
  Literal out(instr.shape());
  CopyStrided(box, in.data().data(), out.mutable_data().data(), Width(instr.shape()));
  return out;
}

Result<Literal> EvalSlice(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(hlo::SliceSpec spec, hlo::GetSliceSpec(instr));
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(spec.starts.size()) != rank) {
    return std::unexpected(InstrError(instr, "slice has the wrong number of dimensions"));
  }
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, in.shape().ElementCount()));
  const std::vector<int64_t> in_strides = ByteStrides(in.shape());
  StridedBox box;
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t start = spec.starts[d], limit = spec.limits[d], stride = spec.strides[d];
    if (start < 0 || limit > in.shape().dimensions(d) || start > limit || stride < 1) {
      return std::unexpected(InstrError(instr, "slice out of bounds in dimension " +
                                                   std::to_string(d)));
    }
    box.dims.push_back((limit - start + stride - 1) / stride);
    box.src_strides.push_back(in_strides[d] * stride);
    offset += start * in_strides[d];
  }
  if (box.dims != instr.shape().dimensions()) {
    return std::unexpected(InstrError(instr, "slice does not produce the declared shape"));
  }
  box.dst_strides = ByteStrides(instr.shape());
  Literal out(instr.shape());
  CopyStrided(box, in.data().data() + offset, out.mutable_data().data(), Width(instr.shape()));
  return out;
}

namespace {

// Start indices of dynamic-(update-)slice, clamped so that a box of `sizes`
// fits in `dims`.
Result<std::vector<int64_t>> ClampedStarts(const Instruction& instr, LiteralSpan index_operands,
                                           const std::vector<int64_t>& dims,
                                           const std::vector<int64_t>& sizes) {
  // Start indices come as one scalar per dimension, or (an older form) as
  // one vector holding them all.
  const bool one_vector = index_operands.size() == 1 && dims.size() != 1 &&
                          index_operands[0]->shape().rank() == 1;
  if (!one_vector && index_operands.size() != dims.size()) {
    return std::unexpected(InstrError(instr, "expected " + std::to_string(dims.size()) +
                                                 " start indices, got " +
                                                 std::to_string(index_operands.size())));
  }
  std::vector<int64_t> starts(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    Result<int64_t> start = one_vector ? IntegerElement(*index_operands[0], static_cast<int64_t>(d))
                                       : ScalarToInt64(*index_operands[d]);
    if (!start) return std::unexpected(InstrError(instr, "start index: " + start.error().ToString()));
    if (sizes[d] > dims[d]) {
      return std::unexpected(InstrError(instr, "slice size exceeds the operand in dimension " +
                                                   std::to_string(d)));
    }
    starts[d] = std::clamp<int64_t>(*start, 0, dims[d] - sizes[d]);
  }
  return starts;
}

}  // namespace

Result<Literal> EvalDynamicSlice(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, in.shape().ElementCount()));
  const std::vector<int64_t>& sizes = instr.shape().dimensions();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(instr, operands.subspan(1), in.shape().dimensions(), sizes));
  const std::vector<int64_t> in_strides = ByteStrides(in.shape());
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * in_strides[d];
  StridedBox box{sizes, in_strides, ByteStrides(instr.shape())};
  Literal out(instr.shape());
  CopyStrided(box, in.data().data() + offset, out.mutable_data().data(), Width(instr.shape()));
  return out;
}

Result<Literal> EvalDynamicUpdateSlice(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_update,
                        InResultType(instr, *operands[1], converted));
  const Literal& update = *converted_update;
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, instr.shape().ElementCount()));
  KILN_RETURN_IF_ERROR(CheckElements(instr, update, update.shape().ElementCount()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(instr, operands.subspan(2), in.shape().dimensions(),
                                      update.shape().dimensions()));
  Literal out = Literal::FromData(instr.shape(), in.data());
  const std::vector<int64_t> out_strides = ByteStrides(instr.shape());
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * out_strides[d];
  StridedBox box{update.shape().dimensions(), ByteStrides(update.shape()), out_strides};
  CopyStrided(box, update.data().data(), out.mutable_data().data() + offset, Width(instr.shape()));
  return out;
}

Result<Literal> EvalConcatenate(const Instruction& instr, LiteralSpan operands) {
  KILN_ASSIGN_OR_RETURN(int64_t dim, hlo::GetSingleDimension(instr));
  const hlo::Shape& out_shape = instr.shape();
  if (dim < 0 || dim >= out_shape.rank()) {
    return std::unexpected(InstrError(instr, "concatenate dimension out of range"));
  }
  const std::vector<int64_t> out_strides = ByteStrides(out_shape);
  Literal out(out_shape);
  int64_t at = 0;
  std::deque<Literal> converted;
  for (const Literal* operand : operands) {
    KILN_ASSIGN_OR_RETURN(const Literal* in, InResultType(instr, *operand, converted));
    KILN_RETURN_IF_ERROR(CheckElements(instr, *in, in->shape().ElementCount()));
    if (in->shape().rank() != out_shape.rank() ||
        at + in->shape().dimensions(dim) > out_shape.dimensions(dim)) {
      return std::unexpected(InstrError(instr, "operand shapes do not add up to the result"));
    }
    StridedBox box{in->shape().dimensions(), ByteStrides(in->shape()), out_strides};
    CopyStrided(box, in->data().data(), out.mutable_data().data() + at * out_strides[dim],
                Width(out_shape));
    at += in->shape().dimensions(dim);
  }
  return out;
}

Result<Literal> EvalPad(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_pad, InResultType(instr, *operands[1], converted));
  const Literal& pad_value = *converted_pad;
  KILN_ASSIGN_OR_RETURN(hlo::PaddingConfig config, hlo::GetPaddingConfig(instr));
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(config.dimensions.size()) != rank) {
    return std::unexpected(InstrError(instr, "padding has the wrong number of dimensions"));
  }
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, in.shape().ElementCount()));
  KILN_RETURN_IF_ERROR(CheckElements(instr, pad_value, 1));
  const hlo::Shape& out_shape = instr.shape();
  const int64_t width = Width(out_shape);
  Literal out(out_shape);
  uint8_t* data = out.mutable_data().data();
  const int64_t total = out.element_count();
  for (int64_t i = 0; i < total; ++i) std::memcpy(data + i * width, pad_value.data().data(), width);

  // Place the operand elements that land inside the result: operand index i
  // of dimension d goes to low + i * (interior + 1).
  const std::vector<int64_t> in_strides = ByteStrides(in.shape());
  const std::vector<int64_t> out_strides = ByteStrides(out_shape);
  StridedBox box;
  int64_t src_offset = 0, dst_offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const hlo::PaddingDimension& p = config.dimensions[d];
    if (p.interior < 0) return std::unexpected(InstrError(instr, "negative interior padding"));
    const int64_t step = p.interior + 1;
    const int64_t in_dim = in.shape().dimensions(d);
    const int64_t out_dim = out_shape.dimensions(d);
    const int64_t expected = p.edge_low + p.edge_high + in_dim + std::max<int64_t>(in_dim - 1, 0) * p.interior;
    if (expected != out_dim) {
      return std::unexpected(InstrError(instr, "padding does not produce the declared shape"));
    }
    int64_t first = p.edge_low < 0 ? (-p.edge_low + step - 1) / step : 0;
    int64_t count = 0;
    if (first < in_dim) {
      const int64_t last_pos = out_dim - 1 - p.edge_low;  // largest i*step allowed
      const int64_t last = last_pos < 0 ? -1 : std::min(in_dim - 1, last_pos / step);
      count = std::max<int64_t>(last - first + 1, 0);
    }
    box.dims.push_back(count);
    box.src_strides.push_back(in_strides[d]);
    box.dst_strides.push_back(out_strides[d] * step);
    src_offset += first * in_strides[d];
    dst_offset += (p.edge_low + first * step) * out_strides[d];
  }
  CopyStrided(box, in.data().data() + src_offset, data + dst_offset, width);
  return out;
}

Result<Literal> EvalIota(const Instruction& instr, LiteralSpan) {
  KILN_ASSIGN_OR_RETURN(int64_t dim, hlo::GetIotaDimension(instr));
  const hlo::Shape& shape = instr.shape();
  if (dim < 0 || dim >= shape.rank()) {
    return std::unexpected(InstrError(instr, "iota_dimension out of range"));
  }
  Literal out(shape);
  const int64_t inner = RowMajorStrides(shape.dimensions())[dim];
  const int64_t size = shape.dimensions(dim);
  const int64_t total = shape.ElementCount();
  return DispatchElementType(
      shape.element_type(),
      [&](auto traits) -> Result<Literal> {
        using Tr = decltype(traits);
        using S = typename Tr::Stored;
        S* data = reinterpret_cast<S*>(out.mutable_data().data());
        for (int64_t i = 0; i < total; ++i) {
          const int64_t v = (i / inner) % size;
          if constexpr (Tr::kKind == ElementKind::kComplex) {
            data[i] = S(static_cast<typename S::value_type>(v), 0);
          } else if constexpr (Tr::kKind == ElementKind::kPred) {
            data[i] = v != 0;
          } else {
            data[i] = Tr::Store(static_cast<typename Tr::Compute>(v));
          }
        }
        return std::move(out);
      },
      [&]() -> Result<Literal> { return std::unexpected(InstrError(instr, "iota needs an array type")); });
}

Result<Literal> EvalReverse(const Instruction& instr, LiteralSpan operands) {
  std::deque<Literal> converted;
  KILN_ASSIGN_OR_RETURN(const Literal* converted_in, InResultType(instr, *operands[0], converted));
  const Literal& in = *converted_in;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::GetDimensions(instr));
  KILN_RETURN_IF_ERROR(CheckElements(instr, in, instr.shape().ElementCount()));
  StridedBox box{in.shape().dimensions(), ByteStrides(in.shape()), ByteStrides(in.shape())};
  int64_t offset = 0;
  for (int64_t d : dims) {
    if (d < 0 || d >= in.shape().rank()) {
      return std::unexpected(InstrError(instr, "reverse dimension out of range"));
    }
    if (box.dims[d] == 0) continue;
    offset += (box.dims[d] - 1) * box.src_strides[d];
    box.src_strides[d] = -box.src_strides[d];
  }
  Literal out(instr.shape());
  CopyStrided(box, in.data().data() + offset, out.mutable_data().data(), Width(instr.shape()));
  return out;
}

Result<Literal> EvalBitcastConvert(const Instruction& instr, LiteralSpan operands) {
  const Literal& in = *operands[0];
  const hlo::PrimitiveType from = in.shape().element_type();
  const hlo::PrimitiveType to = instr.shape().element_type();
  auto natural = [](hlo::PrimitiveType t) {
    return hlo::HostByteWidth(t) * 8 == hlo::BitWidth(t);
  };
  if (!natural(from) || !natural(to)) {
    return std::unexpected(InstrError(instr, "bitcast-convert between " +
                                                 std::string(hlo::PrimitiveTypeName(from)) +
                                                 " and " + std::string(hlo::PrimitiveTypeName(to)) +
                                                 " (sub-byte types) is not supported"));
  }
  if (in.shape().ByteSize() != instr.shape().ByteSize() ||
      static_cast<int64_t>(in.data().size()) != in.shape().ByteSize()) {
    return std::unexpected(InstrError(instr, "bitcast-convert changes the byte size"));
  }
  // Host storage is little-endian and row-major, so a wider element splits
  // into its narrower parts along a new minor dimension, low bytes first,
  // exactly as the bytes already lie.
  return Literal::FromData(instr.shape(), in.data());
}

}  // namespace kiln::runtime
