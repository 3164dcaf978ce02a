#include "compiler/passes/layout_assignment.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/convolution_layout.h"
#include "compiler/passes/layout_groups.h"
#include "compiler/passes/loop_state_layout.h"
#include "runtime/chip/memory_tiles.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Computations that are a fusion's body: their parameters take the fusion's
// operands as laid out, so their values keep the layouts they were given.
std::unordered_set<const hlo::Computation*> FusionBodies(const hlo::Module& module) {
  std::unordered_set<const hlo::Computation*> bodies;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() != Opcode::kFusion) continue;
      for (const hlo::Computation* called : instr->called_computations()) bodies.insert(called);
    }
  }
  return bodies;
}

bool ReadByReshape(const Instruction& value) {
  return std::any_of(value.users().begin(), value.users().end(),
                     [](const Instruction* user) { return user->opcode() == Opcode::kReshape; });
}

// Groups whose tiles' rows are mostly padding, every member free to change
// and none reshaped (a reshape across another layout is a move, not a
// bitcast), take the layout DenserMinorToMajor gives their first member
// that needs one.
bool AssignDenseRowLayouts(hlo::Computation& computation) {
  LayoutGroups groups(computation);
  bool changed = false;
  for (const std::vector<Instruction*>& members : groups.Members()) {
    const bool free = std::all_of(members.begin(), members.end(), [&](const Instruction* m) {
      return LayoutAssignable(*m, computation) && !ReadByReshape(*m);
    });
    if (!free) continue;
    std::optional<std::vector<int64_t>> denser;
    for (const Instruction* m : members) {
      if ((denser = DenserMinorToMajor(m->shape()))) break;
    }
    if (!denser) continue;
    for (Instruction* m : members) {
      hlo::Shape shape = m->shape();
      shape.mutable_layout().minor_to_major = *denser;
      m->set_shape(std::move(shape));
    }
    changed = true;
  }
  return changed;
}

}  // namespace

std::optional<std::vector<int64_t>> DenserMinorToMajor(const hlo::Shape& shape) {
  if (!shape.IsArray() || !shape.is_static() || shape.rank() < 3) return std::nullopt;
  std::vector<int64_t> physical = runtime::PhysicalOrder(shape);  // major to minor
  std::vector<size_t> data;  // positions in `physical` of dimensions holding data
  for (size_t i = 0; i < physical.size(); ++i) {
    if (shape.dimensions(physical[i]) > 1) data.push_back(i);
  }
  if (data.size() < 3) return std::nullopt;
  const int64_t rows = runtime::SublaneTile(shape.element_type());
  const size_t minor = data.back();
  const size_t second = data[data.size() - 2];
  if (shape.dimensions(physical[minor]) < runtime::kLanes || shape.dimensions(physical[second]) >= rows) {
    return std::nullopt;
  }
  // The most minor of the other dimensions that fills a tile's rows.
  std::optional<size_t> replacement;
  for (size_t k = data.size() - 2; k-- > 0;) {
    if (shape.dimensions(physical[data[k]]) >= rows) {
      replacement = data[k];
      break;
    }
  }
  if (!replacement) return std::nullopt;
  const int64_t moved = physical[*replacement];
  physical.erase(physical.begin() + static_cast<std::ptrdiff_t>(*replacement));
  // `minor` shifted down by one with the erase; the moved dimension goes
  // right before it.
  physical.insert(physical.begin() + static_cast<std::ptrdiff_t>(minor - 1), moved);
  return std::vector<int64_t>(physical.rbegin(), physical.rend());
}

Result<bool> LayoutAssignment::Run(hlo::Module& module) {
  const std::unordered_set<const hlo::Computation*> fusion_bodies = FusionBodies(module);
  // Loop state first: the values a body computes for its next iteration
  // are then laid out before the groups of each computation are.
  KILN_ASSIGN_OR_RETURN(bool changed, AssignLoopStateLayouts(module));
  for (const auto& computation : module.computations()) {
    if (fusion_bodies.contains(computation.get())) continue;
    KILN_ASSIGN_OR_RETURN(bool convolutions, AssignConvolutionLayouts(*computation));
    changed |= convolutions;
    changed |= AssignDenseRowLayouts(*computation);
  }
  return changed;
}

}  // namespace kiln::passes
