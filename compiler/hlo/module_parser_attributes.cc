// The attribute half of the module parser (module_parser.h): module
// header attributes, instruction attributes, and the call-nesting bound
// the computations they name must keep.
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/attribute_value_parser.h"
#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/module_parser.h"

namespace kiln::hlo::parser_internal {

Status ModuleParser::ParseHeaderAttribute(Module& module) {
  Token name_tok = cur_.tok();
  if (!cur_.Is(TokKind::kAttributeName)) return std::unexpected(cur_.Expected("a module attribute"));
  std::string name(name_tok.text);
  cur_.Advance();
  if (module.FindAttribute(name) != nullptr ||
      (name == "entry_computation_layout" && module.entry_layout().has_value())) {
    return std::unexpected(Err(name_tok, "attribute " + name + " given twice"));
  }
  if (name == "entry_computation_layout") {
    KILN_ASSIGN_OR_RETURN(ComputationLayout layout, ParseComputationLayout());
    module.set_entry_layout(std::move(layout));
    return Ok();
  }
  Attribute attr;
  attr.name = name;
  KILN_RETURN_IF_ERROR(ReadAttributeValue(attr));
  module.AddAttribute(std::move(attr));
  return Ok();
}

Status ModuleParser::NoteCall(const Computation& caller, const Computation* callee,
                              const Token& at) {
  const CallLevel& below = call_levels_.at(callee);
  const int level = below.level + 1;
  if (level > kMaxCallNesting) {
    return std::unexpected(Err(
        at, "calling %" + callee->name() + " here nests computations " + std::to_string(level) +
                " deep (%" + caller.name() + " down to %" + below.bottom->name() +
                "); calls may nest at most " + std::to_string(kMaxCallNesting) +
                " computations deep"));
  }
  if (level > current_level_.level) current_level_ = {level, below.bottom};
  return Ok();
}

Status ModuleParser::ParseInstructionAttribute(const Computation& comp, Instruction& instr,
                                               std::vector<PendingControl>& pending) {
  const uint32_t name_offset = cur_.tok().offset;
  const std::string_view name = cur_.tok().text;
  if (cur_.Is(TokKind::kAttributeName)) {
    cur_.Advance();
  } else if (cur_.Is(TokKind::kIdent) && cur_.PeekNext().kind == TokKind::kEqual) {
    cur_.Advance();
    cur_.Advance();
  } else {
    return std::unexpected(cur_.Expected("an attribute (name=value)"));
  }
  if (instr.FindAttribute(name) != nullptr) {
    return std::unexpected(cur_.ErrorAt(
        name_offset, "attribute " + std::string(name) + " given twice on %" + std::string(instr.name())));
  }
  if (name == "control-predecessors") {
    PendingControl p{&instr, {}, false};
    KILN_ASSIGN_OR_RETURN(p.names, ParseNameList(cur_, &p.braced));
    pending.push_back(std::move(p));
    return Ok();
  }
  Attribute attr(arena_);  // its strings and lists go where the instruction's list does
  attr.name = name;
  if (IsComputationAttribute(name)) {
    attr.kind = Attribute::Kind::kComputations;
    if (cur_.Is(TokKind::kLbrace) && cur_.PeekNext().kind != TokKind::kRbrace &&
        !IsNameToken(cur_.PeekNext().kind)) {
      return std::unexpected(Err(cur_.tok(), "inline computations are not supported"));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Token> refs, ParseNameList(cur_, &attr.braced));
    for (const Token& t : refs) {
      Computation* callee = computations_.Find(t.text);
      if (callee == nullptr) {
        return std::unexpected(Err(t, "computation %" + std::string(t.text) +
                                          " is not defined (callees must come before callers)"));
      }
      KILN_RETURN_IF_ERROR(NoteCall(comp, callee, t));
      attr.computations.push_back(callee);
    }
  } else {
    KILN_RETURN_IF_ERROR(ReadAttributeValue(attr));
  }
  instr.AddAttribute(std::move(attr));
  return Ok();
}

}  // namespace kiln::hlo::parser_internal
