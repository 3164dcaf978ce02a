#include "compiler/passes/side_effects.h"

#include "compiler/hlo/opcode.h"

namespace kiln::passes {

using hlo::Opcode;

bool HasSideEffect(const hlo::Instruction& instr) {
  if (hlo::CategoryOf(instr.opcode()) == hlo::OpcodeCategory::kCollective) return true;
  switch (instr.opcode()) {
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kDomain:
      return true;
    case Opcode::kCustomCall: {
      const std::pmr::string* flag = instr.AttributeText("custom_call_has_side_effect");
      return flag != nullptr && *flag == "true";
    }
    default:
      return false;
  }
}

bool IsCseCandidate(const hlo::Instruction& instr) {
  if (HasSideEffect(instr) || !instr.control_predecessors().empty()) return false;
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kCustomCall:
      return false;
    case Opcode::kConstant:
      return instr.literal() != nullptr && !instr.literal()->elided();
    default:
      return true;
  }
}

}  // namespace kiln::passes
