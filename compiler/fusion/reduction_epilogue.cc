// Reduction epilogue fusion of the heuristic planner: an elementwise op over
// a reduction's result (`mean = sum / n`, a convert of the sum, an rsqrt of
// the variance) is computed in the reduction's kernel as each block of the
// result is finished, instead of in a kernel of its own that reads the
// result back from HBM. XLA fuses these consumers into the reduction's
// fusion the same way (GPU: --xla_gpu_enable_reduction_epilogue_fusion).
//
// The kernel then iterates over the reduction's operand, its kept
// dimensions blocked and the reduced ones walked in sequence; the epilogue
// runs once per kept element. So it applies only when the consumer's
// kernel iterates over the result's elements and nothing else: a loop
// kernel whose outputs all have the result's dimensions. A kernel over a
// larger space (the normalization `x - broadcast(mean)`) would need the
// whole reduction before its first element: that stays two kernels.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/op_class.h"

namespace kiln::fusion::internal {
namespace {

std::string DimensionsText(const hlo::Shape& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.dimensions().size(); ++d) {
    if (d > 0) text += ",";
    text += std::to_string(shape.dimensions()[d]);
  }
  return text + "]";
}

}  // namespace

FusionEdge HeuristicPlanner::DecideReductionEpilogue(const Instruction& p, const Instruction& c) {
  const FusionRule rule = FusionRule::kOutput;
  const std::vector<int32_t>& consumer_groups = groups_of_[c.index_in_parent()];
  if (consumer_groups.size() != 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "consumer %" + c.name() + " is computed in " + std::to_string(consumer_groups.size()) +
                      " kernels: fusing reduction %" + p.name() + " would compute it in each");
  }
  const int32_t g = consumer_groups.front();
  const Group& group = groups_[g];
  auto fused = [&] {
    return FusionEdge{p.index_in_parent(), c.index_in_parent(), -1, rule, true,
                      "reduction epilogue: " + Describe(c) + " is computed in the kernel of reduction %" +
                          p.name() + " as each block of its result is finished",
                      DecisionKind::kProfitability};
  };
  if (group.reduce == &p) return fused();  // another reader of p took it in
  if (group.opaque || group.contraction != nullptr) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "the kernel of " + Describe(c) + " already has " +
                      (group.contraction != nullptr ? Describe(*group.contraction) : std::string("an opaque op")) +
                      ": a reduction's epilogue runs in a loop over its result alone");
  }
  // A second reduction of the same space (a mean of squares beside a mean)
  // is walked by the same loop.
  if (group.reduce != nullptr && !SameReductionSpace(*group.reduce, p)) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "the kernel of " + Describe(c) + " already has " + Describe(*group.reduce) +
                      ", which walks another space than reduction %" + p.name() +
                      ": one reduction space per kernel");
  }
  for (const Instruction* out : group.outputs) {
    if (!SameExtents(out->shape(), p.shape())) {
      return Refuse(p, c, rule, DecisionKind::kLegality,
                    "the kernel of %" + group.root->name() + " writes %" + out->name() + " " +
                        DimensionsText(out->shape()) + ", not reduction %" + p.name() + "'s result " +
                        DimensionsText(p.shape()) + ": it would need the whole reduction before its first element");
    }
  }
  // Every reader of the result must be in this kernel: a reduction both
  // fused and materialized for another kernel would read its operand twice.
  for (const Instruction* user : p.users()) {
    const std::vector<int32_t>& its = groups_of_[user->index_in_parent()];
    if (its.size() != 1 || its.front() != g || !IsReductionEpilogue(p, *user)) {
      return Refuse(p, c, rule, DecisionKind::kProfitability,
                    Describe(*user) + " also reads reduction %" + p.name() +
                        " outside the kernel of %" + group.root->name() +
                        ": fusing would compute the reduction twice");
    }
  }
  if (group.member_count + 1 > options_.max_kernel_instructions) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "the kernel of %" + group.root->name() + " already has " + std::to_string(group.member_count) +
                      " instructions (limit " + std::to_string(options_.max_kernel_instructions) + ")");
  }
  TilingProblem problem;
  problem.space = TilingProblem::Space::kReduce;
  problem.anchor = &p;
  problem.inputs = InputsWith(group, p);
  problem.outputs = group.outputs;
  if (static_cast<int64_t>(problem.inputs.size()) > options_.max_kernel_inputs) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "fusing %" + p.name() + " would make the kernel of %" + group.root->name() + " read " +
                      std::to_string(problem.inputs.size()) + " arrays (limit " +
                      std::to_string(options_.max_kernel_inputs) + ")");
  }
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem)) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "fusing %" + p.name() + " into the kernel of %" + group.root->name() + " would need " +
                      FormatBytes(vmem) + " of VMEM, scoped VMEM is " + FormatBytes(options_.tiling.scoped_vmem_bytes));
  }
  return fused();
}

}  // namespace kiln::fusion::internal
