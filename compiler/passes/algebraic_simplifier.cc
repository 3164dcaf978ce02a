#include "compiler/passes/algebraic_simplifier.h"

#include <string>
#include <vector>

#include "compiler/hlo/int_list_text.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::IntListText;
using hlo::Opcode;

// True when `instr` is a constant whose every element equals `value`, or a
// broadcast of such a scalar constant.
bool IsUniformConstant(const Instruction* instr, double value) {
  if (instr->opcode() == Opcode::kBroadcast && instr->operand_count() == 1 &&
      instr->operand(0)->shape().rank() == 0) {
    instr = instr->operand(0);
  }
  if (instr->opcode() != Opcode::kConstant) return false;
  const hlo::Literal* literal = instr->literal();
  if (literal == nullptr || literal->elided() || !literal->shape().IsArray()) return false;
  hlo::PrimitiveType type = literal->shape().element_type();
  if (!hlo::IsFloatingPoint(type) && !hlo::IsInteger(type)) return false;
  int64_t count = literal->element_count();
  if (count <= 0) return false;
  for (int64_t i = 0; i < count; ++i) {
    if (literal->GetAsDouble(i) != value) return false;
  }
  return true;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

class Simplifier {
 public:
  explicit Simplifier(hlo::Computation& computation) : computation_(computation) {}

  Result<bool> Run() {
    std::vector<Instruction*> order;
    order.reserve(computation_.instructions().size());
    for (const auto& instr : computation_.instructions()) order.push_back(instr.get());
    for (Instruction* instr : order) {
      if (instr->users().empty() && computation_.root() != instr) continue;
      KILN_RETURN_IF_ERROR(Visit(instr));
    }
    return changed_;
  }

 private:
  Status Visit(Instruction* instr) {
    switch (instr->opcode()) {
      case Opcode::kMultiply:
        return SimplifyIdentityOperand(instr, 1.0);
      case Opcode::kAdd:
        return SimplifyIdentityOperand(instr, 0.0);
      case Opcode::kBroadcast:
        return SimplifyBroadcast(instr);
      case Opcode::kReshape:
        return SimplifyReshape(instr);
      case Opcode::kTranspose:
        return SimplifyTranspose(instr);
      case Opcode::kSlice:
        return SimplifySlice(instr);
      case Opcode::kPad:
        return SimplifyPad(instr);
      case Opcode::kGetTupleElement:
        return SimplifyGetTupleElement(instr);
      default:
        return Ok();
    }
  }

  // Replaces `instr` by `replacement` when their shapes are exactly equal.
  Status ReplaceIfSameShape(Instruction* instr, Instruction* replacement) {
    if (!(instr->shape() == replacement->shape())) return Ok();
    KILN_RETURN_IF_ERROR(computation_.ReplaceAllUsesWith(instr, replacement));
    changed_ = true;
    return Ok();
  }

  Status Retarget(Instruction* instr, Instruction* new_operand) {
    KILN_RETURN_IF_ERROR(instr->ReplaceOperandWith(0, new_operand));
    changed_ = true;
    return Ok();
  }

  Status SimplifyIdentityOperand(Instruction* instr, double identity) {
    if (instr->operand_count() != 2) return Ok();
    if (IsUniformConstant(instr->operand(1), identity)) {
      return ReplaceIfSameShape(instr, instr->operand(0));
    }
    if (IsUniformConstant(instr->operand(0), identity)) {
      return ReplaceIfSameShape(instr, instr->operand(1));
    }
    return Ok();
  }

  Status SimplifyBroadcast(Instruction* instr) {
    if (instr->operand_count() != 1) return Ok();
    Instruction* operand = instr->operand(0);
    if (instr->shape() == operand->shape()) return ReplaceIfSameShape(instr, operand);
    if (operand->opcode() == Opcode::kConstant && operand->shape().rank() == 0 &&
        instr->shape().IsArray() && instr->shape().ElementCount() == 1 &&
        instr->shape().rank() == 0) {
      return ReplaceIfSameShape(instr, operand);
    }
    if (operand->opcode() != Opcode::kBroadcast || operand->operand_count() != 1) return Ok();
    Result<std::vector<int64_t>> outer = hlo::GetDimensions(*instr);
    Result<std::vector<int64_t>> inner = hlo::GetDimensions(*operand);
    if (!outer || !inner) return Ok();  // the verifier reports malformed dims
    std::vector<int64_t> composed;
    for (int64_t d : *inner) {
      if (d < 0 || d >= static_cast<int64_t>(outer->size())) return Ok();
      composed.push_back((*outer)[d]);
    }
    instr->SetTextAttribute("dimensions", IntListText(composed));
    return Retarget(instr, operand->operand(0));
  }

  Status SimplifyReshape(Instruction* instr) {
    if (instr->operand_count() != 1) return Ok();
    Instruction* operand = instr->operand(0);
    if (instr->shape() == operand->shape()) return ReplaceIfSameShape(instr, operand);
    if (operand->opcode() != Opcode::kReshape || operand->operand_count() != 1) return Ok();
    Instruction* source = operand->operand(0);
    if (instr->shape() == source->shape()) return ReplaceIfSameShape(instr, source);
    return Retarget(instr, source);
  }

  Status SimplifyTranspose(Instruction* instr) {
    if (instr->operand_count() != 1) return Ok();
    Result<std::vector<int64_t>> outer = hlo::GetDimensions(*instr);
    if (!outer) return Ok();
    Instruction* operand = instr->operand(0);
    if (IsIdentityPermutation(*outer)) return ReplaceIfSameShape(instr, operand);
    if (operand->opcode() != Opcode::kTranspose || operand->operand_count() != 1) return Ok();
    Result<std::vector<int64_t>> inner = hlo::GetDimensions(*operand);
    if (!inner || inner->size() != outer->size()) return Ok();
    // Result dim i is the operand's dim outer[i], which is the source's dim
    // inner[outer[i]].
    std::vector<int64_t> composed;
    for (int64_t d : *outer) {
      if (d < 0 || d >= static_cast<int64_t>(inner->size())) return Ok();
      composed.push_back((*inner)[d]);
    }
    Instruction* source = operand->operand(0);
    if (IsIdentityPermutation(composed) && instr->shape() == source->shape()) {
      return ReplaceIfSameShape(instr, source);
    }
    instr->SetTextAttribute("dimensions", IntListText(composed));
    return Retarget(instr, source);
  }

  Status SimplifySlice(Instruction* instr) {
    if (instr->operand_count() != 1) return Ok();
    Instruction* operand = instr->operand(0);
    Result<hlo::SliceSpec> spec = hlo::GetSliceSpec(*instr);
    if (!spec || static_cast<int64_t>(spec->starts.size()) != operand->shape().rank()) {
      return Ok();
    }
    for (size_t i = 0; i < spec->starts.size(); ++i) {
      if (spec->starts[i] != 0 || spec->strides[i] != 1 ||
          spec->limits[i] != operand->shape().dimensions(static_cast<int64_t>(i))) {
        return Ok();
      }
    }
    return ReplaceIfSameShape(instr, operand);
  }

  Status SimplifyPad(Instruction* instr) {
    if (instr->operand_count() != 2) return Ok();
    Result<hlo::PaddingConfig> config = hlo::GetPaddingConfig(*instr);
    if (!config) return Ok();
    for (const hlo::PaddingDimension& d : config->dimensions) {
      if (d.edge_low != 0 || d.edge_high != 0 || d.interior != 0) return Ok();
    }
    return ReplaceIfSameShape(instr, instr->operand(0));
  }

  Status SimplifyGetTupleElement(Instruction* instr) {
    if (instr->operand_count() != 1 || instr->operand(0)->opcode() != Opcode::kTuple) return Ok();
    Result<int64_t> index = hlo::GetTupleIndex(*instr);
    const Instruction* tuple = instr->operand(0);
    if (!index || *index < 0 || *index >= tuple->operand_count()) return Ok();
    return ReplaceIfSameShape(instr, tuple->operand(*index));
  }

  hlo::Computation& computation_;
  bool changed_ = false;
};

}  // namespace

Result<bool> SimplifyComputation(hlo::Computation& computation) {
  return Simplifier(computation).Run();
}

Result<bool> AlgebraicSimplifier::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool simplified, SimplifyComputation(*computation));
    changed |= simplified;
  }
  return changed;
}

}  // namespace kiln::passes
