// The heuristic planner's working state (planner.h, heuristic.cc,
// sibling_fusion.cc). Private to kiln_fusion.
//
// Walks the entry computation from the root towards the parameters, so that
// every consumer's kernels are known when its producers are decided. Each
// kernel under construction is a Group: its root, members, the arrays it
// reads and writes. Then siblings are merged into multi-output kernels,
// and a kernel whose value other kernels read merges into one of them
// (producer_consumer_fusion.cc).
// One planner per computation and call; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/fusion_plan.h"
#include "compiler/fusion/planner.h"
#include "compiler/fusion/tiling.h"
#include "compiler/hlo/computation.h"

namespace kiln::fusion::internal {

using hlo::Instruction;

// Why an edge is not fused, and whether that may be flipped (fusion_plan.h).
struct Refusal {
  DecisionKind kind = DecisionKind::kProfitability;
  std::string reason;
};

// The refusal op classes alone force on p -> c (an opaque producer or
// consumer, a reduction producer, a dot or convolution fed by anything but
// an elementwise, broadcast or data-movement producer), or nullopt. Always
// kLegality. Used by the heuristic and to classify the edges the
// `none` and `given` plans refuse.
std::optional<std::string> OpClassRefusal(const Instruction& p, const Instruction& c);

// A kernel under construction.
struct Group {
  const Instruction* root = nullptr;
  int64_t member_count = 0;
  std::vector<const Instruction*> inputs;
  std::vector<const Instruction*> outputs;
  const Instruction* contraction = nullptr;
  const Instruction* reduce = nullptr;
  const Instruction* window = nullptr;  // a depthwise convolution or reduce-window
  bool opaque = false;
  int64_t first_root = 0;  // smallest and largest entry index of its roots
  int64_t last_root = 0;
};

class HeuristicPlanner {
 public:
  HeuristicPlanner(const hlo::Computation& computation, const PlannerOptions& options)
      : computation_(computation),
        options_(options),
        groups_of_(computation.instruction_count()),
        own_group_(computation.instruction_count(), -1),
        prologue_of_(computation.instruction_count(), nullptr) {}

  std::vector<FusionEdge> Run();

 private:
  // Decides every edge from `producer` to its users and starts its own
  // group when it stays materialized.
  void VisitProducer(const Instruction* producer);
  FusionEdge Refuse(const Instruction& p, const Instruction& c, FusionRule rule, DecisionKind kind,
                    std::string reason);
  // The decision for p -> c, given the groups c is already in.
  FusionEdge Decide(const Instruction& p, const Instruction& c);
  // Inputs of `group` once `p`, one of its inputs, is computed inside it.
  static std::vector<const Instruction*> InputsWith(const Group& group, const Instruction& p);
  TilingProblem ProblemOf(const Group& group, const Instruction* extra_contraction) const;
  // Why `p` cannot join `group`, or nullopt when it can.
  std::optional<Refusal> CheckFit(const Group& group, const Instruction& p) const;
  // Whether `group` is already over the scoped VMEM and would need no more
  // than `vmem_with` with the producer CheckFit weighs.
  bool NoWorseFit(const Group& group, int64_t vmem_with) const;
  // The decision for p -> c when c is a dot or convolution, or one of the
  // producers already fused into its operands (a prologue).
  FusionEdge DecidePrologue(const Instruction& p, const Instruction& c);
  // The decision for p -> c when p is a reduction and c an elementwise op
  // over its result (reduction_epilogue.cc).
  FusionEdge DecideReductionEpilogue(const Instruction& p, const Instruction& c);
  // Adds `p` to every group `c` is in.
  void Commit(const Instruction& p, const Instruction& c);
  void StartGroup(const Instruction& p);
  // Representative of a group after sibling merges.
  int32_t Rep(int32_t g);
  // The shape a group iterates over; empty when it cannot be a sibling.
  const hlo::Shape* SiblingKey(const Group& group) const;
  // True when group `from` (a representative) reads, through any chain of
  // kernels, a value of group `target`. Groups whose roots all come before
  // the target's first root cannot reach it (operands precede users) and
  // are pruned. With `direct_reads_ok`, `from`'s own reads of the target's
  // values (which it computes once merged) do not count: only other paths.
  // Gives up (true) after a bounded search.
  bool DependsOn(int32_t from, int32_t target, bool& gave_up, bool direct_reads_ok = false);
  // Records a sibling edge per pair of kernels reading a shared value and
  // merges the pairs that pass CheckSiblings.
  void MergeSiblings();
  // Why representatives `a` and `b` cannot merge, or nullopt. `a_reads_b`:
  // `a` reads values of `b` and, merged, computes them itself.
  // `horizontal`: they may iterate over different shapes and would become
  // one horizontal kernel (whole arrays in one launch).
  std::optional<Refusal> CheckSiblings(int32_t a, int32_t b, bool a_reads_b = false, bool horizontal = false);
  // Records, unfused, the sibling pairs MergeSiblings does not consider
  // because the value they share is small (a scalar hyperparameter, a bias):
  // kernels that could merge, of one shape or horizontally, for the
  // autotuner to weigh the launch it saves (sibling_fusion.cc). Runs last;
  // merges nothing.
  void OfferSmallValueSiblings();
  static Group Merged(const Group& a, const Group& b, bool a_reads_b = false);
  void Merge(int32_t a, int32_t b, bool a_reads_b = false);
  // Merges the kernel of a materialized value into the kernel of one
  // consumer that reads it (producer_consumer_fusion.cc).
  void MergeProducersIntoConsumers();
  // Merges loop kernels over a reduction's result that read the
  // reduction's values into its kernel (reduction_epilogue.cc).
  void MergeEpiloguesIntoReductions();
  // Why loop kernel `loop` cannot become the epilogue of kernel
  // `reduction` (both representatives), or nullopt. `aligned`: every read
  // of the reduction's values in `loop` is element for element.
  std::optional<Refusal> CheckEpilogueKernel(int32_t reduction, int32_t loop, bool aligned);
  // After p's kernel merged into `kernel`: when every consumer that reads p
  // from HBM is in `kernel`, fuses those edges so p is not written; true
  // then.
  bool AbsorbIfAllReadersInside(const Instruction& p, int32_t kernel);

  const hlo::Computation& computation_;
  const PlannerOptions& options_;
  std::vector<std::vector<int32_t>> groups_of_;  // per instruction
  std::vector<int32_t> own_group_;               // group rooted at each instruction
  // Per instruction: the contraction whose prologue computes it (decided
  // with the prologue's head, DecidePrologue), or nullptr.
  std::vector<const Instruction*> prologue_of_;
  std::vector<Group> groups_;
  std::vector<int32_t> rep_;  // sibling merges (union-find)
  std::vector<FusionEdge> edges_;
  // DependsOn scratch.
  std::vector<int64_t> visited_;
  int64_t epoch_ = 0;
  std::vector<int32_t> stack_;
  std::vector<const Instruction*> values_;
};

}  // namespace kiln::fusion::internal
