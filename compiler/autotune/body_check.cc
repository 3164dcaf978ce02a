#include "compiler/autotune/body_check.h"

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace kiln::autotune::internal {
namespace {

using hlo::Computation;
using hlo::Instruction;

// `roots`' computations and those they call, callees first, each once.
void AddCallees(const Computation& computation, std::unordered_set<const Computation*>& seen,
                std::vector<const Computation*>& order) {
  for (const auto& instr : computation.instructions()) {
    for (const Computation* callee : instr->called_computations()) {
      if (!seen.insert(callee).second) continue;
      AddCallees(*callee, seen, order);
      order.push_back(callee);
    }
  }
}

// A module text whose entry is `entry` (not itself in a module), with every
// computation it calls.
std::string ModuleText(const std::string& name, const Computation& entry) {
  std::unordered_set<const Computation*> seen;
  std::vector<const Computation*> callees;
  AddCallees(entry, seen, callees);
  std::string text = "HloModule " + name + "\n";
  for (const Computation* callee : callees) text += "\n" + hlo::PrintComputation(*callee) + "\n";
  return text + "\nENTRY " + hlo::PrintComputation(entry) + "\n";
}

// The kernel's instructions of `computation` (as planned) cloned into a
// computation of their own: parameters for its inputs, its roots returned.
// Named as body_fusion.cc names a fused computation's parts, so that the
// two texts are equal when the fusion holds exactly these instructions.
std::unique_ptr<Computation> ReferenceOf(const Computation& computation, const fusion::BodyKernel& kernel,
                                         const std::string& name) {
  const std::vector<int64_t>& inputs = kernel.inputs;
  std::vector<const Instruction*> at;
  for (const auto& instr : computation.instructions()) at.push_back(instr.get());
  auto out = std::make_unique<Computation>(name);
  std::unordered_map<const Instruction*, Instruction*> clone_of;
  for (size_t i = 0; i < inputs.size(); ++i) {
    clone_of[at[inputs[i]]] = out->AddInstruction(
        Instruction::CreateParameter(static_cast<int64_t>(i), at[inputs[i]]->shape(), "param_" + std::to_string(i)));
  }
  for (int64_t index : kernel.instructions) {
    const Instruction& original = *at[index];
    std::vector<Instruction*> operands;
    for (const Instruction* operand : original.operands()) operands.push_back(clone_of.at(operand));
    clone_of[&original] = out->AddInstruction(Instruction::CreateClone(original, operands, original.name()));
  }
  if (kernel.roots.size() == 1) {
    out->set_root(clone_of.at(at[kernel.roots.front()]));
  } else {
    std::vector<hlo::Shape> shapes;
    std::vector<Instruction*> values;
    for (int64_t root : kernel.roots) {
      shapes.push_back(at[root]->shape());
      values.push_back(clone_of.at(at[root]));
    }
    out->set_root(out->AddInstruction(
        Instruction::Create(hlo::Opcode::kTuple, hlo::Shape::Tuple(shapes), values, "tuple")));
  }
  return out;
}

// OK when operand `i` of the fusion `step` carries the value the kernel's
// instructions read as input `i`: that instruction itself, or what another
// body kernel's fusion returns for it (directly, or through a
// get-tuple-element of a multi-output fusion).
Status CheckWiring(const Instruction& step, const fusion::BodyKernel& kernel, const Computation& as_planned,
                   const std::unordered_map<std::string, const fusion::BodyKernel*>& kernel_of_step) {
  const auto& at = as_planned.instructions();
  if (step.operand_count() != static_cast<int64_t>(kernel.inputs.size())) {
    return FailedPreconditionError("body kernel " + std::string(step.name()) + " reads " +
                                   std::to_string(step.operand_count()) + " values, its instructions " +
                                   std::to_string(kernel.inputs.size()));
  }
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    const std::string_view expected = at[kernel.inputs[i]]->name();
    const Instruction* operand = step.operand(static_cast<int64_t>(i));
    std::string_view carried = operand->name();
    int64_t index = 0;
    if (operand->opcode() == hlo::Opcode::kGetTupleElement) {
      KILN_ASSIGN_OR_RETURN(index, hlo::GetTupleIndex(*operand));
      operand = operand->operand(0);
    }
    if (operand->opcode() == hlo::Opcode::kFusion) {
      auto it = kernel_of_step.find(std::string(operand->name()));
      if (it != kernel_of_step.end() && index < static_cast<int64_t>(it->second->roots.size())) {
        carried = at[it->second->roots[index]]->name();
      }
    }
    if (carried != expected) {
      return FailedPreconditionError("body kernel " + std::string(step.name()) + " reads %" + std::string(carried) +
                                     " as its input " + std::to_string(i) + ", where its instructions read %" +
                                     std::string(expected));
    }
  }
  return Ok();
}

}  // namespace

Result<std::vector<ModulePair>> ChangedBodyKernels(const driver::PreparedModule& heuristic,
                                                   const driver::PreparedModule& candidate) {
  std::vector<ModulePair> out;
  if (candidate.body_flips.empty()) return out;
  if (!heuristic.unfused_bodies_text) return FailedPreconditionError("the module kept no unfused bodies to check against");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> unfused,
                        hlo::ParseModule(*heuristic.unfused_bodies_text, "unfused-bodies.hlo"));
  std::unordered_map<std::string, std::set<std::vector<int64_t>>> formed;
  for (const fusion::BodyDecisions& planned : heuristic.body_decisions) {
    for (const fusion::BodyKernel& kernel : planned.kernels) formed[planned.computation].insert(kernel.instructions);
  }
  for (const fusion::BodyDecisions& planned : candidate.body_decisions) {
    if (!candidate.body_flips.contains(planned.computation)) continue;
    const Computation* as_planned = unfused->FindComputation(planned.computation);
    const Computation* as_fused = candidate.module->FindComputation(planned.computation);
    if (as_planned == nullptr || as_fused == nullptr) {
      return InternalError("computation %" + planned.computation + " is missing from the programs being checked");
    }
    std::unordered_map<std::string, const Instruction*> fused_by_name;
    for (const auto& instr : as_fused->instructions()) fused_by_name.emplace(instr->name(), instr.get());
    std::unordered_map<std::string, const fusion::BodyKernel*> kernel_of_step;
    for (const fusion::BodyKernel& kernel : planned.kernels) {
      if (!kernel.step.empty()) kernel_of_step.emplace(kernel.step, &kernel);
    }
    for (const fusion::BodyKernel& kernel : planned.kernels) {
      if (kernel.instructions.size() < 2 || kernel.step.empty()) continue;  // computed as planned
      if (formed[planned.computation].contains(kernel.instructions)) continue;
      auto fusion = fused_by_name.find(kernel.step);
      if (fusion == fused_by_name.end() || fusion->second->called_computations().size() != 1) {
        return InternalError("body kernel " + kernel.step + " of %" + planned.computation + " is not a fusion");
      }
      const Instruction& step = *fusion->second;
      KILN_RETURN_IF_ERROR(CheckWiring(step, kernel, *as_planned, kernel_of_step));
      const Computation& fused = *step.called_computations().front();
      ModulePair pair;
      pair.name = kernel.step + " (in %" + planned.computation + ")";
      pair.reference_hlo = ModuleText("check", *ReferenceOf(*as_planned, kernel, fused.name()));
      pair.candidate_hlo = ModuleText("check", fused);
      for (int64_t i : kernel.instructions) pair.instructions.emplace_back(as_planned->instructions()[i]->name());
      pair.computation = planned.computation;
      out.push_back(std::move(pair));
    }
  }
  return out;
}

}  // namespace kiln::autotune::internal
