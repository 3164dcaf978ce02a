#include "runtime/timing/step_traffic.h"

#include <algorithm>

#include "compiler/hlo/computation.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Bytes read to use `value` whole: a broadcast is read as its operand.
double SourceBytes(const Instruction& value) {
  const Instruction* v = &value;
  while (v->opcode() == Opcode::kBroadcast && v->operand_count() == 1) v = v->operand(0);
  return PaddedArrayBytes(v->shape());
}

bool SlicesFirstOperand(Opcode op) {
  return op == Opcode::kDynamicSlice || op == Opcode::kSlice || op == Opcode::kGather;
}

bool UpdatesFirstOperandInPlace(Opcode op) { return op == Opcode::kDynamicUpdateSlice || op == Opcode::kScatter; }

// Bytes `user` reads of its operand `index`.
double OperandReadBytes(const Instruction& user, int64_t index) {
  const Instruction& operand = *user.operand(index);
  if (index == 0 && SlicesFirstOperand(user.opcode())) return PaddedArrayBytes(user.shape());
  if (index == 0 && UpdatesFirstOperandInPlace(user.opcode())) return 0;
  return SourceBytes(operand);
}

// Bytes a fusion reads of its operand `index`: the slices its fused
// computation takes of it, or all of it.
double FusionOperandReadBytes(const Instruction& fusion, int64_t index) {
  const Instruction& operand = *fusion.operand(index);
  if (fusion.called_computations().size() != 1) return SourceBytes(operand);
  const hlo::Computation& fused = *fusion.called_computations()[0];
  if (index >= fused.parameter_count() || fused.parameters()[index] == nullptr) return SourceBytes(operand);
  const Instruction& parameter = *fused.parameters()[index];
  if (parameter.users().empty()) return 0;
  double sliced = 0;
  for (const Instruction* user : parameter.users()) {
    const bool only_first = user->operand(0) == &parameter &&
                            [&] {
                              for (int64_t i = 1; i < user->operand_count(); ++i) {
                                if (user->operand(i) == &parameter) return false;
                              }
                              return true;
                            }();
    if (!only_first) return SourceBytes(operand);
    if (SlicesFirstOperand(user->opcode())) {
      sliced += PaddedArrayBytes(user->shape());
    } else if (!UpdatesFirstOperandInPlace(user->opcode())) {
      return SourceBytes(operand);
    }
  }
  return std::min(sliced, SourceBytes(operand));
}

// Bytes `instr` writes.
double WrittenBytes(const Instruction& instr) {
  if (instr.opcode() == Opcode::kDynamicUpdateSlice && instr.operand_count() >= 2) {
    return PaddedArrayBytes(instr.operand(1)->shape());
  }
  if (instr.opcode() == Opcode::kScatter && instr.operand_count() >= 3) {
    return PaddedArrayBytes(instr.operand(instr.operand_count() - 1)->shape());
  }
  return PaddedArrayBytes(instr.shape());
}

}  // namespace

double StepTrafficBytes(const Instruction& instr) {
  double bytes = WrittenBytes(instr);
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    bytes += instr.opcode() == Opcode::kFusion ? FusionOperandReadBytes(instr, i) : OperandReadBytes(instr, i);
  }
  return bytes;
}

}  // namespace kiln::runtime::timing
