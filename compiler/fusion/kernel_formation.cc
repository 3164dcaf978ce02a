#include "compiler/fusion/kernel_formation.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/fusion/kernel_schedule.h"
#include "compiler/fusion/op_class.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/passes/side_effects.h"

namespace kiln::fusion {
namespace {

using hlo::Instruction;

std::string EdgeText(const hlo::Computation& computation, const FusionEdge& edge) {
  const auto& instrs = computation.instructions();
  auto name = [&](int64_t i) { return "%" + std::string(instrs[i]->name()); };
  if (edge.is_sibling()) {
    return "fused sibling edge " + name(edge.consumer) + " + " + name(edge.sibling) + " (reading " +
           name(edge.producer) + ")";
  }
  return "fused edge " + name(edge.producer) + " -> " + name(edge.consumer);
}

Status CheckEdgeIndices(const hlo::Computation& computation, const FusionEdge& edge) {
  int64_t n = computation.instruction_count();
  auto ok = [&](int64_t i) { return i >= 0 && i < n; };
  if (!ok(edge.producer) || !ok(edge.consumer) || (edge.is_sibling() && !ok(edge.sibling))) {
    return InvalidArgumentError("edge refers to an instruction index outside computation %" + computation.name());
  }
  return Ok();
}

// Structural validity of a fused producer->consumer edge.
Status CheckFusedEdge(const hlo::Computation& computation, const FusionEdge& edge) {
  const auto& instrs = computation.instructions();
  const Instruction& producer = *instrs[edge.producer];
  const Instruction& consumer = *instrs[edge.consumer];
  // Named only when refused: the tuner forms plans by the thousand.
  auto where = [&] { return EdgeText(computation, edge) + ": "; };
  const auto& ops = consumer.operands();
  if (std::find(ops.begin(), ops.end(), &producer) == ops.end()) {
    return InvalidArgumentError(where() + "the producer is not an operand of the consumer");
  }
  OpClass pc = ClassOf(producer);
  OpClass cc = ClassOf(consumer);
  if (pc == OpClass::kFree || pc == OpClass::kOpaque) {
    return InvalidArgumentError(where() + "producer " + Describe(producer) + " cannot be fused");
  }
  if (cc == OpClass::kFree || cc == OpClass::kOpaque) {
    return InvalidArgumentError(where() + "consumer " + Describe(consumer) + " takes no fused producers");
  }
  if (cc == OpClass::kWindow) {
    return InvalidArgumentError(where() + "window op " + Describe(consumer) + " reads its operands from HBM");
  }
  if (pc == OpClass::kWindow && !IsWindowEpilogue(producer, consumer)) {
    return InvalidArgumentError(where() + "window op " + Describe(producer) +
                                " computes only elementwise consumers "
                                "of its result's dimensions in its kernel, not " +
                                Describe(consumer));
  }
  if (pc == OpClass::kReduce && !IsReductionEpilogue(producer, consumer)) {
    return InvalidArgumentError(where() + "reduction " + Describe(producer) +
                                " computes only elementwise consumers "
                                "of its result's dimensions in its kernel, not " +
                                Describe(consumer));
  }
  if (cc == OpClass::kContraction && !FeedsContractionBlocks(producer)) {
    return InvalidArgumentError(where() + "consumer " + Describe(consumer) +
                                " takes only elementwise, broadcast "
                                "and data-movement producers, not " +
                                Describe(producer));
  }
  return Ok();
}

// Union-find over materialized roots (sibling merges).
class DisjointSets {
 public:
  explicit DisjointSets(int64_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int64_t Find(int64_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int64_t a, int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int64_t> parent_;
};

// A horizontal kernel runs its parts on whole arrays: a contraction or a
// window op, which needs its own grid, cannot be one of them.
template <typename Where>
Status CheckHorizontal(const hlo::Computation& computation, const Kernel& kernel, const Where& where) {
  for (int64_t i : kernel.instructions) {
    const Instruction& instr = *computation.instructions()[i];
    const OpClass c = ClassOf(instr);
    if (c == OpClass::kContraction || c == OpClass::kWindow || c == OpClass::kOpaque) {
      return InvalidArgumentError(where() + ": a horizontal kernel runs on whole arrays; " + Describe(instr) +
                                  " needs a kernel of its own grid");
    }
  }
  return Ok();
}

KernelKind KindOf(const hlo::Computation& computation, const Kernel& kernel) {
  const auto& instrs = computation.instructions();
  bool contraction = false, reduce = false;
  for (int64_t i : kernel.instructions) {
    const Instruction& instr = *instrs[i];
    if (instr.opcode() == hlo::Opcode::kFusion) return KernelKind::kGiven;
    OpClass c = ClassOf(instr);
    contraction |= c == OpClass::kContraction;
    reduce |= c == OpClass::kReduce;
  }
  if (kernel.roots.size() > 1) return KernelKind::kMultiOutput;
  if (kernel.instructions.size() == 1) return KernelKind::kSingle;
  if (contraction) return KernelKind::kOutput;
  if (reduce) return KernelKind::kInput;
  return KernelKind::kLoop;
}


}  // namespace

Status FormKernels(const hlo::Computation& computation, const TilingOptions& options,
                   FusionPlan& plan) {
  const auto& instrs = computation.instructions();
  const int64_t n = computation.instruction_count();

  // Fused producers of each consumer, and how many users fuse each producer.
  std::vector<std::vector<int64_t>> fused_producers(n);
  std::vector<int64_t> fused_users(n, 0);
  struct SiblingPair {
    int64_t a, b;
    bool a_reads_b;   // producer-consumer multi-output fusion
    bool horizontal;  // different shapes, whole arrays
  };
  std::vector<SiblingPair> sibling_pairs;
  for (const FusionEdge& edge : plan.edges) {
    KILN_RETURN_IF_ERROR(CheckEdgeIndices(computation, edge));
    if (!edge.fused) continue;
    if (edge.is_sibling()) {
      sibling_pairs.push_back(
          {edge.consumer, edge.sibling, edge.producer == edge.sibling, edge.rule == FusionRule::kHorizontal});
      continue;
    }
    KILN_RETURN_IF_ERROR(CheckFusedEdge(computation, edge));
    std::vector<int64_t>& producers = fused_producers[edge.consumer];
    if (std::find(producers.begin(), producers.end(), edge.producer) != producers.end()) {
      continue;  // a repeated edge
    }
    producers.push_back(edge.producer);
    ++fused_users[edge.producer];
  }

  std::vector<char> materialized(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    if (IsFreeInstruction(instr)) continue;
    // A side-effecting custom call nothing reads (a StableHLO check, a host
    // callback) still runs: it is a kernel of its own.
    materialized[i] = &instr == computation.root() ||
                      fused_users[i] < static_cast<int64_t>(instr.users().size()) ||
                      (instr.users().empty() && instr.opcode() == hlo::Opcode::kCustomCall &&
                       passes::HasSideEffect(instr));
  }

  DisjointSets sets(n);
  std::vector<int64_t> horizontal_roots;
  for (const auto& [a, b, a_reads_b, horizontal] : sibling_pairs) {
    // A value that every consumer now computes itself is no longer
    // written: its kernel is gone, so there is nothing left to merge (an
    // edited plan that also fused it into its consumers).
    if (!materialized[a] || !materialized[b]) continue;
    for (int64_t x : {a, b}) {
      const OpClass c = ClassOf(*instrs[x]);
      if (c == OpClass::kOpaque || c == OpClass::kWindow) {
        return InvalidArgumentError("fused sibling edge %" + std::string(instrs[a]->name()) + " + %" +
                                    std::string(instrs[b]->name()) + ": %" + std::string(instrs[x]->name()) +
                                    (c == OpClass::kOpaque
                                         ? " runs as its own kernel"
                                         : " is a window op, whose kernel follows its result"));
      }
    }
    sets.Union(a, b);
    if (horizontal) horizontal_roots.push_back(a);
  }

  // Gather each kernel's members: every root of the set plus the producers
  // reachable over fused edges.
  std::vector<int64_t> kernel_of_set(n, -1);
  std::vector<Kernel> kernels;
  std::vector<int64_t> mark(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (!materialized[i]) continue;
    int64_t set = sets.Find(i);
    if (kernel_of_set[set] < 0) {
      kernel_of_set[set] = static_cast<int64_t>(kernels.size());
      kernels.emplace_back();
    }
    int64_t k = kernel_of_set[set];
    Kernel& kernel = kernels[k];
    kernel.roots.push_back(i);
    std::vector<int64_t> stack = {i};
    while (!stack.empty()) {
      int64_t x = stack.back();
      stack.pop_back();
      if (mark[x] == k) continue;
      mark[x] = k;
      kernel.instructions.push_back(x);
      for (int64_t p : fused_producers[x]) stack.push_back(p);
    }
  }
  std::vector<char> horizontal(kernels.size(), 0);
  for (int64_t root : horizontal_roots) horizontal[kernel_of_set[sets.Find(root)]] = 1;
  plan.root_kernel.assign(n, -1);
  for (size_t k = 0; k < kernels.size(); ++k) {
    Kernel& kernel = kernels[k];
    // A producer shared by two roots of a multi-output kernel is gathered
    // twice when another kernel duplicating it was gathered in between.
    std::sort(kernel.instructions.begin(), kernel.instructions.end());
    kernel.instructions.erase(std::unique(kernel.instructions.begin(), kernel.instructions.end()),
                              kernel.instructions.end());
    for (int64_t r : kernel.roots) plan.root_kernel[r] = static_cast<int64_t>(k);
    for (int64_t x : kernel.instructions) mark[x] = -2 - static_cast<int64_t>(k);
    for (int64_t x : kernel.instructions) {
      for (const Instruction* operand : instrs[x]->operands()) {
        int64_t o = operand->index_in_parent();
        if (mark[o] != -2 - static_cast<int64_t>(k)) kernel.inputs.push_back(o);
      }
    }
    std::sort(kernel.inputs.begin(), kernel.inputs.end());
    kernel.inputs.erase(std::unique(kernel.inputs.begin(), kernel.inputs.end()),
                        kernel.inputs.end());
  }

  // Order kernels: producers first, keeping few bytes live (kernel_schedule.h).
  const int64_t kernel_count = static_cast<int64_t>(kernels.size());
  KILN_ASSIGN_OR_RETURN(KernelSchedule schedule, ScheduleKernels(computation, kernels, plan.root_kernel));
  const std::vector<int64_t>& order = schedule.order;

  plan.kernels.clear();
  plan.kernels.reserve(kernel_count);
  for (int64_t k : order) {
    Kernel kernel = std::move(kernels[k]);
    kernel.id = static_cast<int64_t>(plan.kernels.size());
    kernel.kind = horizontal[k] ? KernelKind::kHorizontal : KindOf(computation, kernel);
    for (int64_t r : kernel.roots) plan.root_kernel[r] = kernel.id;
    auto where = [&] {
      return "kernel " + std::to_string(kernel.id) + " (" + std::string(KernelKindName(kernel.kind)) +
             ", root %" + std::string(instrs[kernel.roots.front()]->name()) + ")";
    };
    if (kernel.kind == KernelKind::kHorizontal)
      KILN_RETURN_IF_ERROR(CheckHorizontal(computation, kernel, where));
    TilingProblem problem = MakeTilingProblem(computation, kernel);
    Result<TileChoice> tile = ChooseTile(problem, options);
    if (tile) {
      kernel.tile = std::move(*tile);
    } else if (kernel.instructions.size() == 1) {
      kernel.tile = TileChoice{};  // nothing to un-fuse: stream it from HBM
    } else {
      return tile.error().WithContext(where());
    }
    plan.kernels.push_back(std::move(kernel));
  }
  plan.scoped_vmem_bytes = options.scoped_vmem_bytes;
  return Ok();
}

Status ValidatePlan(const hlo::Computation& computation, const TilingOptions& options,
                    const FusionPlan& plan) {
  FusionPlan expected;
  expected.edges = plan.edges;
  KILN_RETURN_IF_ERROR(FormKernels(computation, options, expected));
  if (expected.kernels.size() != plan.kernels.size()) {
    return InvalidArgumentError("plan has " + std::to_string(plan.kernels.size()) + " kernels, its edges describe " +
                                std::to_string(expected.kernels.size()));
  }
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel& have = plan.kernels[k];
    const Kernel& want = expected.kernels[k];
    if (have.id != static_cast<int64_t>(k) || have.instructions != want.instructions ||
        have.roots != want.roots || have.inputs != want.inputs || have.kind != want.kind) {
      return InvalidArgumentError("kernel " + std::to_string(k) +
                                  " differs from the kernel its edges describe (re-run FormKernels)");
    }
    Status tile = ValidateTile(MakeTilingProblem(computation, have), have.tile, options);
    if (!tile) {
      return tile.error().WithContext("kernel " + std::to_string(k));
    }
  }
  return Ok();
}

Result<std::vector<FusionEdge>> FlipEdges(const FusionPlan& base, const std::vector<int64_t>& flips) {
  std::vector<FusionEdge> edges = base.edges;
  std::vector<char> seen(edges.size(), 0);
  for (int64_t e : flips) {
    if (e < 0 || e >= static_cast<int64_t>(edges.size())) {
      return InvalidArgumentError("flip of edge " + std::to_string(e) + ": the plan has " +
                                  std::to_string(edges.size()) + " edges");
    }
    if (seen[e]++) return InvalidArgumentError("edge " + std::to_string(e) + " is flipped twice");
    FusionEdge& edge = edges[e];
    if (edge.kind == DecisionKind::kLegality) {
      return InvalidArgumentError("edge " + std::to_string(e) + " is a legality decision and may not be flipped (" +
                                  edge.reason + ")");
    }
    edge.fused = !edge.fused;
    edge.reason = std::string("autotuner: ") + (edge.fused ? "fused" : "not fused") +
                  " (the heuristic said: " + edge.reason + ")";
  }
  return edges;
}

Status ReorderKernels(const hlo::Computation& computation, const std::vector<std::vector<int64_t>>& preferred,
                      FusionPlan& plan) {
  const int64_t count = static_cast<int64_t>(plan.kernels.size());
  std::map<std::vector<int64_t>, int64_t> kernel_of;
  for (int64_t k = 0; k < count; ++k) kernel_of.emplace(plan.kernels[k].instructions, k);
  std::vector<int64_t> rank(count, -1);
  for (size_t p = 0; p < preferred.size(); ++p) {
    auto it = kernel_of.find(preferred[p]);
    auto named = [&] {
      std::string text;
      for (int64_t i : preferred[p]) {
        if (!text.empty()) text += ", ";
        text += i >= 0 && i < computation.instruction_count() ? "%" + std::string(computation.instructions()[i]->name())
                                                              : std::to_string(i);
      }
      return "kernel order entry " + std::to_string(p) + " (" + text + ")";
    };
    if (it == kernel_of.end()) return InvalidArgumentError(named() + ": the plan has no such kernel");
    if (rank[it->second] >= 0) return InvalidArgumentError(named() + ": listed twice");
    rank[it->second] = static_cast<int64_t>(p);
  }
  for (int64_t k = 0; k < count; ++k) {
    if (rank[k] < 0) rank[k] = static_cast<int64_t>(preferred.size()) + k;
  }
  KILN_ASSIGN_OR_RETURN(KernelSchedule schedule,
                        ScheduleKernelsPreferring(computation, plan.kernels, plan.root_kernel, rank));
  std::vector<Kernel> ordered;
  ordered.reserve(count);
  for (int64_t k : schedule.order) {
    ordered.push_back(std::move(plan.kernels[k]));
    Kernel& kernel = ordered.back();
    kernel.id = static_cast<int64_t>(ordered.size()) - 1;
    for (int64_t r : kernel.roots) plan.root_kernel[r] = kernel.id;
  }
  plan.kernels = std::move(ordered);
  return Ok();
}

}  // namespace kiln::fusion
