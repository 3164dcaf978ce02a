#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

void AppendAttribute(const Attribute& a, std::string& out) {
  out += a.name;
  out += '=';
  switch (a.kind) {
    case Attribute::Kind::kText:
    case Attribute::Kind::kRaw:
      out += a.value;
      return;
    case Attribute::Kind::kComputations:
    case Attribute::Kind::kInstructions: {
      if (a.braced) out += '{';
      bool first = true;
      auto name = [&](std::string_view n) {
        if (!first) out += ", ";
        first = false;
        out += '%';
        out += n;
      };
      for (const Computation* c : a.computations) name(c->name());
      for (const Instruction* i : a.instructions) name(i->name());
      if (a.braced) out += '}';
      return;
    }
  }
}

bool ShouldPrint(const Attribute& a, const PrintOptions& options) {
  if (a.kind == Attribute::Kind::kInstructions) return options.control_predecessors;
  return options.informational_attributes || !IsNonSemanticAttribute(a.name);
}

void AppendInstruction(const Instruction& instr, bool is_root, const PrintOptions& options,
                       std::string& out) {
  out += "  ";
  if (is_root) out += "ROOT ";
  out += '%';
  out += instr.name();
  out += " = ";
  instr.shape().AppendTo(out);
  out += ' ';
  out += instr.OpcodeText();
  out += '(';
  if (instr.opcode() == Opcode::kParameter) {
    out += std::to_string(instr.parameter_number());
  } else if (instr.opcode() == Opcode::kConstant && instr.literal() != nullptr) {
    out += instr.literal()->ValueToString();
  } else {
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (i > 0) out += ", ";
      out += '%';
      out += instr.operand(i)->name();
    }
  }
  out += ')';
  for (const Attribute& a : instr.attributes()) {
    if (!ShouldPrint(a, options)) continue;
    out += ", ";
    AppendAttribute(a, out);
  }
}

void AppendComputation(const Computation& comp, const PrintOptions& options, std::string& out) {
  out += '%';
  out += comp.name();
  out += " {\n";
  for (const auto& instr : comp.instructions()) {
    AppendInstruction(*instr, instr.get() == comp.root(), options, out);
    out += '\n';
  }
  out += '}';
  if (!comp.execution_thread().empty()) {
    out += ", execution_thread=\"";
    for (char c : comp.execution_thread()) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options) {
  std::string out;
  bool is_root = instruction.parent() != nullptr && instruction.parent()->root() == &instruction;
  AppendInstruction(instruction, is_root, options, out);
  return out;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  std::string out;
  AppendComputation(computation, options, out);
  return out;
}

std::string PrintModule(const Module& module) {
  std::string out = "HloModule " + module.name();
  if (const auto& layout = module.entry_layout()) {
    out += ", entry_computation_layout={(";
    for (size_t i = 0; i < layout->parameters.size(); ++i) {
      if (i > 0) out += ", ";
      layout->parameters[i].AppendTo(out);
    }
    out += ")->";
    layout->result.AppendTo(out);
    out += '}';
  }
  for (const Attribute& a : module.attributes()) {
    out += ", ";
    AppendAttribute(a, out);
  }
  out += "\n";
  for (const auto& comp : module.computations()) {
    out += "\n";
    if (comp->is_entry()) out += "ENTRY ";
    AppendComputation(*comp, PrintOptions{}, out);
    out += "\n";
  }
  return out;
}

}  // namespace kiln::hlo
