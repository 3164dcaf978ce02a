#include "compiler/lowering/kernel_module_text.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/hlo/module.h"
#include "compiler/hlo/printer.h"

namespace kiln::lowering {
namespace {

constexpr hlo::PrintOptions kKernelPrint{.control_predecessors = false,
                                         .informational_attributes = false};

// Emits parameters for the arrays of `shape` and, for tuples, the `tuple`
// instructions that rebuild it under `name`.
void EmitInput(const hlo::Shape& shape, const std::string& name, int64_t& next_param,
               int64_t& next_temp, std::string& out) {
  if (!shape.IsTuple()) {
    out += "  %" + name + " = " + shape.ToString(true) + " parameter(" +
           std::to_string(next_param++) + ")\n";
    return;
  }
  std::vector<std::string> parts;
  for (const hlo::Shape& element : shape.tuple_shapes()) {
    std::string part = "kiln.in." + std::to_string(next_temp++);
    EmitInput(element, part, next_param, next_temp, out);
    parts.push_back(std::move(part));
  }
  out += "  %" + name + " = " + shape.ToString(true) + " tuple(";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", %" : "%") + parts[i];
  out += ")\n";
}

// Appends the names of the arrays of `name` (of `shape`), extracting them
// from tuples with get-tuple-element lines.
void EmitOutputArrays(const hlo::Shape& shape, const std::string& name, int64_t& next_temp,
                      std::string& out, std::vector<std::pair<std::string, std::string>>& arrays) {
  if (!shape.IsTuple()) {
    arrays.emplace_back(name, shape.ToString(true));
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    const hlo::Shape& element = shape.tuple_shapes(i);
    std::string part = "kiln.out." + std::to_string(next_temp++);
    out += "  %" + part + " = " + element.ToString(true) + " get-tuple-element(%" + name +
           "), index=" + std::to_string(i) + "\n";
    EmitOutputArrays(element, part, next_temp, out, arrays);
  }
}

// Every computation the instructions call, directly or not, in module order
// (callees before callers).
std::vector<const hlo::Computation*> CalledComputations(
    const std::vector<const hlo::Instruction*>& instructions) {
  std::unordered_set<const hlo::Computation*> seen;
  std::vector<const hlo::Computation*> stack;
  for (const hlo::Instruction* instr : instructions) {
    for (const hlo::Computation* c : instr->called_computations()) stack.push_back(c);
  }
  while (!stack.empty()) {
    const hlo::Computation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const auto& instr : c->instructions()) {
      for (const hlo::Computation* callee : instr->called_computations()) stack.push_back(callee);
    }
  }
  std::vector<const hlo::Computation*> ordered;
  if (instructions.empty()) return ordered;
  for (const auto& c : instructions.front()->parent()->parent()->computations()) {
    if (seen.contains(c.get())) ordered.push_back(c.get());
  }
  return ordered;
}

// PrintInstruction marks the entry's own root; a kernel picks its own.
std::string InstructionLine(const hlo::Instruction& instr) {
  std::string line = hlo::PrintInstruction(instr, kKernelPrint);
  if (line.starts_with("  ROOT ")) line.erase(2, 5);
  return line;
}

}  // namespace

std::string KernelModuleText(const std::vector<const hlo::Instruction*>& instructions,
                             const std::vector<KernelInput>& inputs,
                             const std::vector<const hlo::Instruction*>& roots) {
  std::string out = "HloModule kernel\n";
  for (const hlo::Computation* c : CalledComputations(instructions)) {
    out += "\n" + hlo::PrintComputation(*c, kKernelPrint) + "\n";
  }
  out += "\nENTRY %kernel {\n";
  int64_t next_param = 0;
  int64_t next_temp = 0;
  for (const KernelInput& input : inputs) {
    EmitInput(input.instruction->shape(), std::string(input.instruction->name()), next_param, next_temp, out);
  }
  const bool single_array = roots.size() == 1 && !roots[0]->shape().IsTuple();
  for (const hlo::Instruction* instr : instructions) {
    std::string line = InstructionLine(*instr);
    if (single_array && instr == roots[0]) line.insert(2, "ROOT ");
    out += line + "\n";
  }
  if (!single_array) {
    std::vector<std::pair<std::string, std::string>> arrays;
    for (const hlo::Instruction* root : roots) {
      EmitOutputArrays(root->shape(), std::string(root->name()), next_temp, out, arrays);
    }
    if (arrays.size() == 1) {
      size_t at = out.rfind("  %" + arrays[0].first + " = ");
      out.insert(at + 2, "ROOT ");
      return out + "}\n";
    }
    std::string shape = "(";
    std::string operands;
    for (size_t i = 0; i < arrays.size(); ++i) {
      shape += (i ? ", " : "") + arrays[i].second;
      operands += (i ? ", %" : "%") + arrays[i].first;
    }
    out += "  ROOT %kiln.outputs = " + shape + ") tuple(" + operands + ")\n";
  }
  out += "}\n";
  return out;
}

}  // namespace kiln::lowering
