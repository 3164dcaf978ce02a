#include "runtime/eval/computation_plan.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

namespace kiln::runtime {
namespace {

using hlo::Instruction;

int ExpectedOperandCount(const Instruction& instr) {
  if (instr.opcode() == hlo::Opcode::kBroadcast) return 1;
  switch (hlo::CategoryOf(instr.opcode())) {
    case hlo::OpcodeCategory::kUnary: return 1;
    case hlo::OpcodeCategory::kBinary: return 2;
    case hlo::OpcodeCategory::kTernary: return 3;
    default: return 1;  // bitcast-convert
  }
}

// A region while the plan is built.
struct Growing {
  std::vector<const Instruction*> members;
  bool open = true;    // no outside instruction has read a member yet
  bool merged = false;  // folded into another region
};

class RegionBuilder {
 public:
  explicit RegionBuilder(const hlo::Computation& c)
      : region_of_(static_cast<size_t>(c.instruction_count()), -1) {}

  Status Add(const Instruction& instr) {
    // Dynamic results run alone, so that their actual sizes follow them.
    if (!IsElementwiseInstruction(instr) || instr.shape().dynamic_mask() != 0) {
      CloseOperandRegions(instr, -1);
      return Ok();
    }
    if (instr.operand_count() != ExpectedOperandCount(instr)) {
      return InvalidArgumentError("instruction %" + std::string(instr.name()) + ": " + instr.OpcodeText() +
                                  " has " + std::to_string(instr.operand_count()) + " operands, expected " +
                                  std::to_string(ExpectedOperandCount(instr)));
    }
    // Join (and merge) every open region of an operand with our dimensions.
    int target = -1;
    for (const Instruction* op : instr.operands()) {
      int r = region_of_[op->index_in_parent()];
      if (r < 0 || !regions_[r].open || op->shape().dimensions() != instr.shape().dimensions()) {
        continue;
      }
      if (target < 0) {
        target = r;
      } else if (r != target) {
        Merge(r, target);
      }
    }
    if (target < 0) {
      target = static_cast<int>(regions_.size());
      regions_.emplace_back();
    }
    CloseOperandRegions(instr, target);
    regions_[target].members.push_back(&instr);
    region_of_[instr.index_in_parent()] = target;
    return Ok();
  }

  const std::vector<int>& region_of() const { return region_of_; }
  std::vector<Growing>& regions() { return regions_; }

 private:
  void CloseOperandRegions(const Instruction& instr, int except) {
    for (const Instruction* op : instr.operands()) {
      int r = region_of_[op->index_in_parent()];
      if (r >= 0 && r != except) regions_[r].open = false;
    }
  }

  void Merge(int from, int into) {
    for (const Instruction* m : regions_[from].members) {
      region_of_[m->index_in_parent()] = into;
      regions_[into].members.push_back(m);
    }
    regions_[from].members.clear();
    regions_[from].merged = true;
  }

  std::vector<int> region_of_;
  std::vector<Growing> regions_;
};

Result<ElementwiseRegion> FinishRegion(std::vector<const Instruction*> members,
                                       const std::vector<int>& region_of, int id,
                                       const Instruction* root) {
  std::sort(members.begin(), members.end(), [](const Instruction* a, const Instruction* b) {
    return a->index_in_parent() < b->index_in_parent();
  });
  ElementwiseRegion region;
  region.element_count = members.back()->shape().ElementCount();
  std::unordered_map<const Instruction*, int> member_index;
  std::unordered_map<const Instruction*, int> input_index;
  for (const Instruction* instr : members) {
    ElementwiseRegion::Member member;
    member.instr = instr;
    KILN_ASSIGN_OR_RETURN(member.kernel, ResolveElementwiseKernel(*instr));
    // Copies and broadcasts into another element type convert, so they have
    // bytes of their own.
    const bool same_type = instr->operand_count() > 0 && instr->shape().element_type() ==
                                                            instr->operand(0)->shape().element_type();
    member.alias_operand = instr->opcode() == hlo::Opcode::kBitcastConvert ||
                           (same_type && (instr->opcode() == hlo::Opcode::kCopy ||
                                          instr->opcode() == hlo::Opcode::kBroadcast));
    for (int64_t k = 0; k < instr->operand_count(); ++k) {
      const Instruction* op = instr->operand(k);
      if (auto it = member_index.find(op); it != member_index.end()) {
        member.sources[k] = it->second;
        continue;
      }
      auto [it, inserted] = input_index.emplace(op, static_cast<int>(region.inputs.size()));
      if (inserted) region.inputs.push_back(op);
      member.sources[k] = ElementwiseRegion::InputSource(it->second);
    }
    member.is_output = instr == root;
    for (const Instruction* user : instr->users()) {
      if (region_of[user->index_in_parent()] != id) member.is_output = true;
    }
    member_index.emplace(instr, static_cast<int>(region.members.size()));
    region.members.push_back(member);
  }
  LayOutRegionScratch(region);
  return region;
}

}  // namespace

Result<std::unique_ptr<ComputationPlan>> BuildComputationPlan(const hlo::Computation& computation) {
  RegionBuilder builder(computation);
  for (const auto& instr : computation.instructions()) {
    KILN_RETURN_IF_ERROR(builder.Add(*instr));
  }

  auto plan = std::make_unique<ComputationPlan>();
  std::vector<int> region_of = builder.region_of();
  // Renumber the surviving regions densely; record each one's last member.
  std::vector<int> dense(builder.regions().size(), -1);
  std::vector<const Instruction*> last_member;
  for (size_t r = 0; r < builder.regions().size(); ++r) {
    Growing& g = builder.regions()[r];
    if (g.merged || g.members.empty()) continue;
    dense[r] = static_cast<int>(plan->regions.size());
    const Instruction* last = *std::max_element(
        g.members.begin(), g.members.end(),
        [](const Instruction* a, const Instruction* b) {
          return a->index_in_parent() < b->index_in_parent();
        });
    last_member.push_back(last);
    plan->regions.emplace_back();
  }
  for (int& r : region_of) {
    if (r >= 0) r = dense[r];
  }
  for (size_t r = 0; r < builder.regions().size(); ++r) {
    if (dense[r] < 0) continue;
    KILN_ASSIGN_OR_RETURN(plan->regions[dense[r]],
                          FinishRegion(std::move(builder.regions()[r].members), region_of,
                                       dense[r], computation.root()));
  }

  // Steps in instruction order; a region runs where its last member is.
  const size_t n = static_cast<size_t>(computation.instruction_count());
  std::vector<int64_t> step_of(n, -1);
  for (const auto& instr : computation.instructions()) {
    const int64_t i = instr->index_in_parent();
    const int r = region_of[i];
    if (r < 0) {
      step_of[i] = static_cast<int64_t>(plan->steps.size());
      plan->steps.push_back({instr.get(), -1});
    } else if (last_member[r] == instr.get()) {
      plan->steps.push_back({nullptr, r});
    }
  }
  // step_of for region members: the region's step index.
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    if (plan->steps[s].region < 0) continue;
    for (const auto& m : plan->regions[plan->steps[s].region].members) {
      step_of[m.instr->index_in_parent()] = static_cast<int64_t>(s);
    }
  }

  // A value dies after the last step that reads it; the root never does.
  plan->release_after.resize(plan->steps.size());
  for (const auto& instr : computation.instructions()) {
    const int64_t i = instr->index_in_parent();
    if (instr.get() == computation.root()) continue;
    int64_t last = step_of[i];
    for (const Instruction* user : instr->users()) {
      last = std::max(last, step_of[user->index_in_parent()]);
    }
    if (last >= 0) plan->release_after[last].push_back(i);
  }
  return plan;
}

}  // namespace kiln::runtime
