#include "compiler/hlo/shape_inference.h"

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Str;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::InRange;
using shape_inference_internal::SameTypeIgnoringFp;
using shape_inference_internal::HigherPrecision;
using shape_inference_internal::Dim;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::SizesMatch;
using shape_inference_internal::IsScalar;
using shape_inference_internal::CalleeShape;
using shape_inference_internal::InferWhile;
using shape_inference_internal::InferConditional;
using shape_inference_internal::InferCallLike;

Result<ProgramShape> GetProgramShape(const Computation& computation) {
  ProgramShape ps;
  for (size_t i = 0; i < computation.parameters().size(); ++i) {
    const Instruction* p = computation.parameters()[i];
    if (p == nullptr) {
      return InvalidArgumentError("computation %" + computation.name() + " has no parameter " + std::to_string(i));
    }
    ps.parameters.push_back(p->shape());
  }
  if (computation.root() == nullptr) {
    return InvalidArgumentError("computation %" + computation.name() + " has no root");
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

Result<Shape> InferInstructionShape(const Instruction& instr, const Shape* declared) {
  const Opcode op = instr.opcode();
  for (const Instruction* operand : instr.operands()) {
    if (operand == nullptr) return InvalidArgumentError("has a null operand");
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
      return InvalidArgumentError(std::string(OpcodeName(op)) + " needs " + std::to_string(n) + " operand(s), has " +
                                  std::to_string(ops.size()));
    }
    return Ok();
  };
  auto needs_declared = [&]() -> Result<Shape> {
    return InvalidArgumentError("the shape of " + std::string(OpcodeName(op)) +
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
        if (d < 0) return InvalidArgumentError("broadcast size " + std::to_string(d) + " is negative");
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
        return InvalidArgumentError("dynamic-reshape needs one size operand per result dimension");
      }
      for (size_t i = 1; i < ops.size(); ++i) {
        if (!ShapesCompatible(ops[i], Shape(PrimitiveType::kS32, {}))) {
          return InvalidArgumentError("dynamic-reshape sizes must be s32[], got " + Str(ops[i]));
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
      if (instr.literal() == nullptr) return InvalidArgumentError("constant has no literal");
      return instr.literal()->shape();
    case Opcode::kAfterAll:
      return Shape::Token();
    case Opcode::kAddDependency:
      KILN_RETURN_IF_ERROR(need(2));
      if (!ops[1].IsToken()) return InvalidArgumentError("add-dependency operand 1 must be a token");
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
