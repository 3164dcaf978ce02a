#include "runtime/kernels/combiner.h"

#include <string>

#include "runtime/kernels/element_access.h"

namespace kiln::runtime {
namespace {

using hlo::PrimitiveType;

bool IsScalarParameter(const hlo::Instruction* instr, int64_t number) {
  return instr->opcode() == hlo::Opcode::kParameter && instr->parameter_number() == number &&
         instr->shape().IsArray() && instr->shape().rank() == 0;
}

// Applies the fast-path op to element ai of acc and xi of input, both of
// element type `type`, in its compute type.
template <typename T>
void ApplyInPlace(ReducerKind kind, hlo::Literal& acc, int64_t ai, const hlo::Literal& input,
                  int64_t xi) {
  SetElementFrom<T>(acc, ai,
                    ApplyReducer<T>(kind, GetElementAs<T>(acc, ai), GetElementAs<T>(input, xi)));
}

}  // namespace

ReducerKind ClassifyReducer(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root != nullptr && computation.parameter_count() == 2 && IsScalarParameter(root, 1) &&
      computation.parameters()[0] != nullptr &&
      computation.parameters()[0]->shape() == root->shape()) {
    return ReducerKind::kAssign;
  }
  if (root == nullptr || computation.parameter_count() != 2 || root->operand_count() != 2 ||
      !root->shape().IsArray() || root->shape().rank() != 0) {
    return ReducerKind::kGeneral;
  }
  const hlo::Instruction* a = root->operand(0);
  const hlo::Instruction* b = root->operand(1);
  const bool params = (IsScalarParameter(a, 0) && IsScalarParameter(b, 1)) ||
                      (IsScalarParameter(a, 1) && IsScalarParameter(b, 0));
  const PrimitiveType type = root->shape().element_type();
  if (!params || a->shape().element_type() != type || b->shape().element_type() != type) {
    return ReducerKind::kGeneral;
  }
  const bool integral = hlo::IsInteger(type) || type == PrimitiveType::kPred;
  switch (root->opcode()) {
    case hlo::Opcode::kAdd: return ReducerKind::kAdd;
    case hlo::Opcode::kMultiply: return ReducerKind::kMultiply;
    case hlo::Opcode::kMaximum:
      return hlo::IsComplex(type) ? ReducerKind::kGeneral : ReducerKind::kMaximum;
    case hlo::Opcode::kMinimum:
      return hlo::IsComplex(type) ? ReducerKind::kGeneral : ReducerKind::kMinimum;
    case hlo::Opcode::kAnd: return integral ? ReducerKind::kAnd : ReducerKind::kGeneral;
    case hlo::Opcode::kOr: return integral ? ReducerKind::kOr : ReducerKind::kGeneral;
    default: return ReducerKind::kGeneral;
  }
}

void ConvertElement(const hlo::Literal& src, int64_t si, hlo::Literal& dst, int64_t di) {
  const PrimitiveType from = src.shape().element_type();
  const PrimitiveType to = dst.shape().element_type();
  if (from == to) {
    CopyElement(src, si, dst, di);
  } else if (hlo::IsComplex(from) || hlo::IsComplex(to)) {
    SetElementFrom(dst, di, GetElementAs<std::complex<double>>(src, si));
  } else if (hlo::IsFloatingPoint(from) || hlo::IsFloatingPoint(to)) {
    SetElementFrom(dst, di, GetElementAs<double>(src, si));
  } else if (hlo::IsUnsignedInteger(from)) {
    SetElementFrom(dst, di, GetElementAs<uint64_t>(src, si));
  } else {
    SetElementFrom(dst, di, GetElementAs<int64_t>(src, si));
  }
}

Result<Combiner> Combiner::Create(const hlo::Computation& computation, int64_t arity,
                                  EvalContext& ctx) {
  if (computation.parameter_count() != 2 * arity) {
    return InvalidArgumentError("computation %" + computation.name() + " takes " +
                                std::to_string(computation.parameter_count()) + " parameters, expected " +
                                std::to_string(2 * arity));
  }
  Combiner c;
  c.computation_ = &computation;
  c.ctx_ = &ctx;
  c.arity_ = arity;
  c.kind_ = arity == 1 ? ClassifyReducer(computation) : ReducerKind::kGeneral;
  for (const hlo::Instruction* param : computation.parameters()) {
    if (param == nullptr || !param->shape().IsArray() || param->shape().rank() != 0) {
      return InvalidArgumentError("computation %" + computation.name() + " must take scalar parameters");
    }
    c.scratch_.push_back(ScalarLiteral(param->shape().element_type()));
  }
  for (const hlo::Literal& lit : c.scratch_) c.scratch_ptrs_.push_back(&lit);
  return c;
}

Status Combiner::Combine(std::span<hlo::Literal* const> accs, int64_t ai,
                         std::span<const hlo::Literal* const> inputs, int64_t xi) {
  if (kind_ != ReducerKind::kGeneral &&
      accs[0]->shape().element_type() == inputs[0]->shape().element_type() &&
      accs[0]->shape().element_type() == scratch_[0].shape().element_type()) {
    VisitComputeType(accs[0]->shape().element_type(), [&]<typename T>(T) {
      ApplyInPlace<T>(kind_, *accs[0], ai, *inputs[0], xi);
    });
    return Ok();
  }
  for (int64_t k = 0; k < arity_; ++k) {
    ConvertElement(*accs[k], ai, scratch_[k], 0);
    ConvertElement(*inputs[k], xi, scratch_[arity_ + k], 0);
  }
  KILN_ASSIGN_OR_RETURN(hlo::Literal result, ctx_->Call(*computation_, scratch_ptrs_));
  if (arity_ == 1 && result.shape().IsArray()) {
    if (result.element_count() != 1) {
      return InvalidArgumentError("computation %" + computation_->name() + " returned a non-scalar");
    }
    ConvertElement(result, 0, *accs[0], ai);
    return Ok();
  }
  if (!result.shape().IsTuple() ||
      static_cast<int64_t>(result.tuple_elements().size()) != arity_) {
    return InvalidArgumentError("computation %" + computation_->name() + " returned " + result.shape().ToString() +
                                ", expected " + std::to_string(arity_) + " scalars");
  }
  for (int64_t k = 0; k < arity_; ++k) {
    const hlo::Literal& element = result.tuple_elements()[k];
    if (!element.shape().IsArray() || element.element_count() != 1) {
      return InvalidArgumentError("computation %" + computation_->name() + " returned a non-scalar");
    }
    ConvertElement(element, 0, *accs[k], ai);
  }
  return Ok();
}

}  // namespace kiln::runtime
