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
#include <optional>
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
                  "consumer %" + std::string(c.name()) + " is computed in " +
                      std::to_string(consumer_groups.size()) + " kernels: fusing reduction %" +
                      std::string(p.name()) + " would compute it in each");
  }
  const int32_t g = consumer_groups.front();
  const Group& group = groups_[g];
  auto fused = [&] {
    return FusionEdge{p.index_in_parent(),
                      c.index_in_parent(),
                      -1,
                      rule,
                      true,
                      "reduction epilogue: " + Describe(c) + " is computed in the kernel of reduction %" +
                          std::string(p.name()) + " as each block of its result is finished",
                      DecisionKind::kProfitability};
  };
  if (group.reduce == &p) return fused();  // another reader of p took it in
  if (group.opaque || group.contraction != nullptr || group.window != nullptr) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "the kernel of " + Describe(c) + " already has " +
                      (group.contraction != nullptr ? Describe(*group.contraction)
                       : group.window != nullptr    ? Describe(*group.window)
                                                    : std::string("an opaque op")) +
                      ": a reduction's epilogue runs in a loop over its result alone");
  }
  // A second reduction of the same space (a mean of squares beside a mean)
  // is walked by the same loop.
  if (group.reduce != nullptr && !SameReductionSpace(*group.reduce, p)) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "the kernel of " + Describe(c) + " already has " + Describe(*group.reduce) +
                      ", which walks another space than reduction %" + std::string(p.name()) +
                      ": one reduction space per kernel");
  }
  for (const Instruction* out : group.outputs) {
    if (!SameExtents(out->shape(), p.shape())) {
      return Refuse(p, c, rule, DecisionKind::kLegality,
                    "the kernel of %" + std::string(group.root->name()) + " writes %" +
                        std::string(out->name()) + " " + DimensionsText(out->shape()) + ", not reduction %" +
                        std::string(p.name()) + "'s result " + DimensionsText(p.shape()) +
                        ": it would need the whole reduction before its first element");
    }
  }
  // Every reader of the result must be in this kernel: a reduction both
  // fused and materialized for another kernel would read its operand twice.
  for (const Instruction* user : p.users()) {
    const std::vector<int32_t>& its = groups_of_[user->index_in_parent()];
    if (its.size() != 1 || its.front() != g || !IsReductionEpilogue(p, *user)) {
      return Refuse(p, c, rule, DecisionKind::kProfitability,
                    Describe(*user) + " also reads reduction %" + std::string(p.name()) +
                        " outside the kernel of %" + std::string(group.root->name()) +
                        ": fusing would compute the reduction twice");
    }
  }
  if (group.member_count + 1 > options_.max_kernel_instructions) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "the kernel of %" + std::string(group.root->name()) + " already has " +
                      std::to_string(group.member_count) + " instructions (limit " +
                      std::to_string(options_.max_kernel_instructions) + ")");
  }
  TilingProblem problem;
  problem.space = TilingProblem::Space::kReduce;
  problem.anchor = &p;
  problem.inputs = InputsWith(group, p);
  problem.outputs = group.outputs;
  if (static_cast<int64_t>(problem.inputs.size()) > options_.max_kernel_inputs) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "fusing %" + std::string(p.name()) + " would make the kernel of %" +
                      std::string(group.root->name()) + " read " + std::to_string(problem.inputs.size()) +
                      " arrays (limit " + std::to_string(options_.max_kernel_inputs) + ")");
  }
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem)) {
    return Refuse(p, c, rule, DecisionKind::kLegality,
                  "fusing %" + std::string(p.name()) + " into the kernel of %" +
                      std::string(group.root->name()) + " would need " + FormatBytes(vmem) +
                      " of VMEM, scoped VMEM is " + FormatBytes(options_.tiling.scoped_vmem_bytes));
  }
  return fused();
}

// A loop kernel over a reduction's result (or a reduction of the same
// space with its epilogue) that reads values of the reduction's kernel is
// merged into that kernel as its epilogue. The per-feature math of a batch
// norm, var = E[x^2] - mean^2 and rsqrt(var + eps), reads two statistics
// and is read by several kernels, so no single edge takes it in. The
// values it reads stay written when other kernels read them; those it
// alone reads are written too (they are the size of the result, small next
// to the operand the kernel walks).
void HeuristicPlanner::MergeEpiloguesIntoReductions() {
  std::vector<const Instruction*> reads;
  // Groups were started from the root towards the parameters: walking them
  // backwards merges a kernel before the kernels that read it.
  for (int32_t k = static_cast<int32_t>(groups_.size()) - 1; k >= 0; --k) {
    if (Rep(k) != k) continue;
    const Group& loop = groups_[k];
    if (loop.opaque || loop.contraction != nullptr || loop.window != nullptr) continue;
    const std::vector<const Instruction*> inputs = loop.inputs;
    for (const Instruction* in : inputs) {
      const int32_t owner = own_group_[in->index_in_parent()];
      if (owner < 0) continue;
      const int32_t r = Rep(owner);
      const Group& reduction = groups_[r];
      if (r == k || reduction.reduce == nullptr || reduction.contraction != nullptr || reduction.opaque ||
          reduction.window != nullptr) {
        continue;
      }
      const Instruction& reduce = *reduction.reduce;
      // A kernel with a reduction of its own joins only one over the same
      // space: one walk computes both (a sum of squares beside the sum its
      // variance reads), and it reads the other's values only in its
      // epilogue (checked below: element for element).
      if (loop.reduce != nullptr && !SameReductionSpace(*loop.reduce, reduce)) continue;
      const bool over_result = std::all_of(loop.outputs.begin(), loop.outputs.end(), [&](const Instruction* out) {
        return SameExtents(out->shape(), reduce.shape());
      });
      if (!over_result) break;  // no reduction's loop holds this kernel
      // The values of r this kernel reads, each read element for element.
      reads.clear();
      bool aligned = true;
      for (const Instruction* v : groups_[k].inputs) {
        const int32_t o = own_group_[v->index_in_parent()];
        if (o < 0 || Rep(o) != r) continue;
        reads.push_back(v);
        for (const Instruction* user : v->users()) {
          const std::vector<int32_t>& its = groups_of_[user->index_in_parent()];
          const bool inside = std::any_of(its.begin(), its.end(), [&](int32_t g) { return Rep(g) == k; });
          if (inside && (ClassOf(*user) != OpClass::kElementwise || !SameExtents(user->shape(), v->shape()))) {
            aligned = false;
          }
        }
      }
      const Instruction& root = *groups_[k].root;
      FusionEdge edge{in->index_in_parent(), root.index_in_parent(), in->index_in_parent(),
                      FusionRule::kMultiOutput, false, "", DecisionKind::kLegality};
      std::optional<Refusal> why = CheckEpilogueKernel(r, k, aligned);
      if (why) {
        edge.kind = why->kind;
        edge.reason = std::move(why->reason);
        edges_.push_back(std::move(edge));
        continue;
      }
      Merge(k, r, /*a_reads_b=*/true);
      for (const Instruction* v : reads) {
        edges_.push_back(FusionEdge{v->index_in_parent(), root.index_in_parent(), v->index_in_parent(),
                                    FusionRule::kMultiOutput, true,
                                    "reduction epilogue: the kernel of reduction %" +
                                        std::string(reduce.name()) + " computes %" +
                                        std::string(root.name()) + " from %" + std::string(v->name()) +
                                        " as each block of its result is finished",
                                    DecisionKind::kProfitability});
      }
      break;
    }
  }
}

std::optional<Refusal> HeuristicPlanner::CheckEpilogueKernel(int32_t reduction, int32_t loop, bool aligned) {
  const Group& r = groups_[reduction];
  const Group& k = groups_[loop];
  const std::string pair = "the kernel of %" + std::string(k.root->name()) +
                           " as an epilogue of reduction %" + std::string(r.reduce->name());
  if (!aligned) {
    return Refusal{DecisionKind::kLegality, pair + ": it reads the reduction's values at other elements than it computes"};
  }
  if (r.member_count + k.member_count > options_.max_kernel_instructions) {
    return Refusal{DecisionKind::kProfitability, pair + ": together more than " +
                                                     std::to_string(options_.max_kernel_instructions) + " instructions"};
  }
  bool gave_up = false;
  if (DependsOn(loop, reduction, gave_up, /*direct_reads_ok=*/true) || DependsOn(reduction, loop, gave_up)) {
    return Refusal{DecisionKind::kLegality,
                   gave_up ? pair + ": could not prove them independent within 256 kernels"
                           : pair + ": it also reads the reduction through another kernel, so merging would create a cycle"};
  }
  Group merged = Merged(k, r, /*a_reads_b=*/true);
  if (static_cast<int64_t>(merged.inputs.size()) > options_.max_kernel_inputs) {
    return Refusal{DecisionKind::kProfitability, pair + ": together they read " + std::to_string(merged.inputs.size()) +
                                                     " arrays (limit " + std::to_string(options_.max_kernel_inputs) + ")"};
  }
  TilingProblem problem = ProblemOf(merged, nullptr);
  problem.inputs = merged.inputs;
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem)) {
    return Refusal{DecisionKind::kLegality, pair + " would need " + FormatBytes(vmem) + " of VMEM, scoped VMEM is " +
                                                FormatBytes(options_.tiling.scoped_vmem_bytes)};
  }
  return std::nullopt;
}

}  // namespace kiln::fusion::internal
