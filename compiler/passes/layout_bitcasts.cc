#include "compiler/passes/layout_bitcasts.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/op_class.h"
#include "runtime/chip/memory_tiles.h"

namespace kiln::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// The dimensions of `shape` of extent over 1, in memory order, major first.
std::vector<int64_t> MemoryDims(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d : runtime::PhysicalOrder(shape)) {
    if (shape.dimensions(d) != 1) dims.push_back(d);
  }
  return dims;
}

bool IsIncreasing(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] <= dims[i - 1]) return false;
  }
  return true;
}

// Two arrays whose element bytes and tiling agree.
bool SameStorage(const Shape& a, const Shape& b) {
  const hlo::Layout& la = a.layout();
  const hlo::Layout& lb = b.layout();
  return a.element_type() == b.element_type() && la.tiles == lb.tiles &&
         la.element_size_bits == lb.element_size_bits && la.memory_space == lb.memory_space &&
         la.tail_padding_alignment == lb.tail_padding_alignment && la.other == lb.other;
}

bool IsStaticArray(const Shape& shape) { return shape.IsArray() && shape.is_static(); }

// A move between two loop-fusible ops, the only reader of its operand: XLA
// fuses the bitcast it becomes into the kernel of both, so the value never
// reaches HBM. kiln's planner fuses through moves but not through bitcasts
// (a bitcast is a buffer alias), so such a move stays a move and is fused;
// as a bitcast it would make its operand a kernel's output in HBM.
bool FusesBetweenLoopOps(const Instruction& move) {
  const Instruction& operand = *move.operand(0);
  if (!hlo::IsLoopFusible(operand) || operand.users().size() != 1) return false;
  if (move.users().empty() || move.parent()->root() == &move) return false;
  for (const Instruction* user : move.users()) {
    if (!hlo::IsLoopFusible(*user) && user->opcode() != Opcode::kReduce) return false;
  }
  return true;
}

// A move whose operand is a dot or convolution it alone reads, read only
// by elementwise ops: the planner computes it and them as the
// contraction's epilogue (as XLA fuses the bitcast into the output
// fusion), which it cannot do through a bitcast.
bool FusesAsContractionEpilogue(const Instruction& move) {
  const Instruction& operand = *move.operand(0);
  if (hlo::ClassOf(operand) != hlo::OpClass::kContraction || operand.users().size() != 1) return false;
  if (move.users().empty() || move.parent()->root() == &move) return false;
  for (const Instruction* user : move.users()) {
    if (hlo::ClassOf(*user) != hlo::OpClass::kElementwise) return false;
  }
  return true;
}

}  // namespace

bool IsPhysicalNoOp(const Instruction& instr) {
  const Opcode op = instr.opcode();
  if ((op != Opcode::kTranspose && op != Opcode::kReshape && op != Opcode::kCopy) || instr.operand_count() != 1) {
    return false;
  }
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.shape();
  if (!IsStaticArray(in) || !IsStaticArray(out) || !SameStorage(in, out) ||
      in.ElementCount() != out.ElementCount() || in.ElementCount() < 0) {
    return false;
  }
  const std::vector<int64_t> in_dims = MemoryDims(in);
  const std::vector<int64_t> out_dims = MemoryDims(out);
  switch (op) {
    case Opcode::kCopy:
      return in.dimensions() == out.dimensions() && in_dims == out_dims;
    case Opcode::kTranspose: {
      Result<std::vector<int64_t>> perm = hlo::GetDimensions(instr);
      if (!perm || static_cast<int64_t>(perm->size()) != out.rank()) return false;
      std::vector<int64_t> mapped;
      for (int64_t d : out_dims) {
        if ((*perm)[d] < 0 || (*perm)[d] >= in.rank()) return false;
        mapped.push_back((*perm)[d]);
      }
      return mapped == in_dims;
    }
    case Opcode::kReshape: {
      // Row-major memory order on both sides: the reshape keeps every
      // element's place in memory; the two minor dimensions, tiled, must
      // be the same for the tiles to hold the same elements.
      if (!IsIncreasing(in_dims) || !IsIncreasing(out_dims)) return false;
      std::vector<int64_t> in_sizes, out_sizes;
      for (int64_t d : in_dims) in_sizes.push_back(in.dimensions(d));
      for (int64_t d : out_dims) out_sizes.push_back(out.dimensions(d));
      if (in_sizes.size() < 2 || out_sizes.size() < 2) return in_sizes == out_sizes;
      if (in_sizes.back() != out_sizes.back()) return false;
      // The second-minor dimension may be split or merged too when both
      // sides hold whole sublane tiles of it: rows then group into tiles
      // the same way ([512,768] and [4,128,768] in bf16 are 32 row tiles
      // of 16 either way).
      const int64_t in_rows = in_sizes[in_sizes.size() - 2];
      const int64_t out_rows = out_sizes[out_sizes.size() - 2];
      const int64_t sublanes = runtime::SublaneTile(in.element_type());
      return in_rows == out_rows || (in_rows % sublanes == 0 && out_rows % sublanes == 0);
    }
    default:
      return false;
  }
}

Result<bool> LayoutBitcasts::Run(hlo::Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    hlo::Computation& comp = *computation;
    std::vector<Instruction*> order;
    bool changed_here = false;
    std::vector<Instruction*> originals;
    std::unordered_set<const Instruction*> ordered_before;  // control predecessors
    for (const auto& instr : comp.instructions()) {
      originals.push_back(instr.get());
      for (const Instruction* pred : instr->control_predecessors()) ordered_before.insert(pred);
    }
    for (Instruction* instr : originals) {
      order.push_back(instr);
      // Moves tied into control order or carrying a sharding are left as
      // they are; so are dead ones (DCE removes them).
      if (!IsPhysicalNoOp(*instr) || FusesBetweenLoopOps(*instr) || FusesAsContractionEpilogue(*instr) ||
          (instr->users().empty() && comp.root() != instr) ||
          !instr->control_predecessors().empty() || ordered_before.contains(instr) ||
          instr->FindAttribute("sharding") != nullptr) {
        continue;
      }
      const std::string name(instr->name());
      instr->set_name(name + ".moved");
      auto bitcast = Instruction::Create(Opcode::kBitcast, instr->shape(), {instr->operand(0)}, name);
      bitcast->set_source_line(instr->source_line());
      Instruction* added = comp.AddInstruction(std::move(bitcast));
      KILN_RETURN_IF_ERROR(comp.ReplaceAllUsesWith(instr, added));
      order.push_back(added);
      changed_here = true;
    }
    if (!changed_here) continue;
    KILN_RETURN_IF_ERROR(comp.SetInstructionOrder(order));
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
