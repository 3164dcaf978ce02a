// Producer->consumer decisions of the heuristic planner (planner.h).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/heuristic_planner.h"
#include "compiler/fusion/op_class.h"
#include "compiler/passes/layout_bitcasts.h"

namespace kiln::fusion {
namespace internal {

std::vector<FusionEdge> HeuristicPlanner::Run() {
  const auto& instrs = computation_.instructions();
  for (auto it = instrs.rbegin(); it != instrs.rend(); ++it) VisitProducer(it->get());
  MergeSiblings();
  MergeProducersIntoConsumers();
  MergeEpiloguesIntoReductions();
  OfferSmallValueSiblings();
  return std::move(edges_);
}

void HeuristicPlanner::VisitProducer(const Instruction* producer) {
  if (IsFreeInstruction(*producer)) return;
  bool materialized = producer == computation_.root() || producer->users().empty();
  for (const Instruction* consumer : producer->users()) {
    if (IsFreeInstruction(*consumer)) {
      materialized = true;
      continue;
    }
    FusionEdge edge = Decide(*producer, *consumer);
    if (edge.fused) {
      Commit(*producer, *consumer);
    } else {
      materialized = true;
    }
    edges_.push_back(std::move(edge));
  }
  if (materialized) StartGroup(*producer);
}

FusionEdge HeuristicPlanner::Refuse(const Instruction& p, const Instruction& c, FusionRule rule,
                                    DecisionKind kind, std::string reason) {
  return {p.index_in_parent(), c.index_in_parent(), -1, rule, false, std::move(reason), kind};
}

std::optional<std::string> OpClassRefusal(const Instruction& p, const Instruction& c) {
  OpClass pc = ClassOf(p);
  OpClass cc = ClassOf(c);
  if (pc == OpClass::kOpaque) {
    return "producer " + Describe(p) + " is not fusible: it runs as its own kernel";
  }
  if (cc == OpClass::kOpaque) {
    return "consumer " + Describe(c) + " is not fusible: it runs as its own kernel";
  }
  if (cc == OpClass::kWindow) {
    return "consumer " + Describe(c) + " is a window op: it reads " + Describe(p) +
           " from HBM, as every element feeds several window taps";
  }
  if (pc == OpClass::kWindow && !IsWindowEpilogue(p, c)) {
    return "producer " + Describe(p) + " is a window op: its kernel computes only elementwise consumers of " +
           "its result (an epilogue), and " + Describe(c) + " is not one";
  }
  if (pc == OpClass::kReduce && !IsReductionEpilogue(p, c)) {
    return "producer " + Describe(p) + " is a reduction: its kernel computes only elementwise consumers of " +
           "its result (an epilogue), and " + Describe(c) + " is not one";
  }
  if (cc == OpClass::kContraction && !FeedsContractionBlocks(p)) {
    return "consumer " + Describe(c) + " reads " + Describe(p) +
           " from HBM: a kernel holds one MXU operation, and only elementwise, broadcast and "
           "data-movement producers are computed as a dot's operand blocks load";
  }
  return std::nullopt;
}

FusionEdge HeuristicPlanner::Decide(const Instruction& p, const Instruction& c) {
  if (std::optional<std::string> why = OpClassRefusal(p, c)) {
    return Refuse(p, c, FusionRule::kNone, DecisionKind::kLegality, std::move(*why));
  }
  OpClass pc = ClassOf(p);
  OpClass cc = ClassOf(c);
  if (pc == OpClass::kReduce) return DecideReductionEpilogue(p, c);
  if (cc == OpClass::kContraction || prologue_of_[c.index_in_parent()] != nullptr) {
    return DecidePrologue(p, c);
  }
  const std::vector<int32_t>& consumer_groups = groups_of_[c.index_in_parent()];
  FusionRule rule = FusionRule::kLoop;
  const Instruction* reduce = nullptr;
  for (int32_t g : consumer_groups) {
    if (groups_[g].reduce != nullptr) reduce = groups_[g].reduce;
  }
  if (pc == OpClass::kContraction || pc == OpClass::kWindow) {
    rule = FusionRule::kOutput;
  } else if (reduce != nullptr) {
    rule = FusionRule::kInput;
  }
  int64_t users = static_cast<int64_t>(p.users().size());
  if (pc == OpClass::kContraction) {
    // A reshape that leaves the result's bytes where they are (a bitcast
    // once layouts are assigned, [512,768] -> [4,128,768]) lets the
    // epilogue behind it in, as XLA fuses the bitcast into the output
    // fusion.
    const bool bitcast_like = c.opcode() == hlo::Opcode::kReshape && passes::IsPhysicalNoOp(c);
    if (cc != OpClass::kElementwise && !bitcast_like) {
      return Refuse(p, c, rule, DecisionKind::kLegality,
                    "only elementwise epilogues (bias, activation, scaling), reached directly or through a "
                    "reshape that keeps the result's bytes in place, are fused into " +
                        Describe(p) + "; " + Describe(c) + " is neither");
    }
    for (int32_t g : consumer_groups) {
      if (groups_[g].reduce != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already has reduction " +
                          Describe(*groups_[g].reduce) +
                          ": a dot or convolution only takes elementwise epilogues");
      }
      if (groups_[g].contraction != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already contains " +
                          Describe(*groups_[g].contraction) + ": one MXU operation per kernel");
      }
      if (groups_[g].window != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already contains window op " +
                          Describe(*groups_[g].window) + ": its loop follows the window's result");
      }
    }
  }
  if (pc == OpClass::kWindow) {
    for (int32_t g : consumer_groups) {
      const Group& group = groups_[g];
      const Instruction* other = group.reduce != nullptr        ? group.reduce
                                 : group.contraction != nullptr ? group.contraction
                                                                : group.window;
      if (other != nullptr) {
        return Refuse(p, c, rule, DecisionKind::kLegality,
                      "the kernel of " + Describe(c) + " already has " + Describe(*other) + ": window op " +
                          Describe(p) + " takes only elementwise epilogues in a loop over its result");
      }
    }
  }
  if (IsExpensive(p) && users > 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer %" + std::string(p.name()) + " is expensive and has " + std::to_string(users) +
                      " consumers: fusing would recompute it");
  }
  if (IsExpensive(p) && consumer_groups.size() > 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "consumer %" + std::string(c.name()) + " is computed in " +
                      std::to_string(consumer_groups.size()) + " kernels: fusing expensive %" +
                      std::string(p.name()) + " would recompute it in each");
  }
  const auto& ops = c.operands();
  int64_t operand_index = std::find(ops.begin(), ops.end(), &p) - ops.begin();
  int64_t reuse = OperandReuse(c, operand_index);
  int64_t bytes = ShapeBytes(p.shape());
  if (reuse > 1 && (IsExpensive(p) || ClassOf(p) == OpClass::kBroadcast ||
                    bytes > options_.reread_limit_bytes)) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "consumer " + Describe(c) + " reads each element of %" + std::string(p.name()) + " " +
                      std::to_string(reuse) + " times: fusing would recompute %" + std::string(p.name()) +
                      " (" + FormatBytes(bytes) + ") on every read");
  }
  int64_t copies =
      static_cast<int64_t>(groups_of_[p.index_in_parent()].size() + consumer_groups.size());
  // Broadcasts and widening converts are cheaper to recompute in every
  // kernel than to write once and read back: each reader loads the
  // narrower source instead.
  const bool cheap_everywhere = pc == OpClass::kBroadcast || IsWideningConvert(p);
  if (copies > options_.max_duplication && !cheap_everywhere) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "fusing %" + std::string(p.name()) + " into " + Describe(c) + " would compute it in " +
                      std::to_string(copies) + " kernels (limit " + std::to_string(options_.max_duplication) +
                      ")");
  }
  if (users > options_.max_duplication && !cheap_everywhere) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer %" + std::string(p.name()) + " has " + std::to_string(users) +
                      " consumers: copying it into each kernel would bloat them (limit " +
                      std::to_string(options_.max_duplication) + ")");
  }
  for (int32_t g : consumer_groups) {
    if (std::optional<Refusal> why = CheckFit(groups_[g], p)) {
      return Refuse(p, c, rule, why->kind, std::move(why->reason));
    }
  }
  std::string reason;
  switch (rule) {
    case FusionRule::kOutput:
      reason = "output fusion: " + Describe(c) + " is an elementwise epilogue of " +
               (pc == OpClass::kWindow ? "window op %" : "%") + std::string(p.name());
      break;
    case FusionRule::kInput:
      reason = "input fusion into reduction %" + std::string(reduce->name());
      break;
    default:
      reason = "loop fusion: " + Describe(p) + " into " + Describe(c);
      break;
  }
  return {p.index_in_parent(), c.index_in_parent(), -1, rule, true, std::move(reason),
          DecisionKind::kProfitability};
}

// HBM bytes a tiled kernel loads at most: every input block at every grid
// step (steps that keep a block skip its load, so this bounds the traffic).
double LoadedBytes(const TileChoice& tile) {
  double block = 0;
  for (const BlockShape& b : tile.inputs) block += static_cast<double>(b.bytes);
  return block * static_cast<double>(tile.grid_steps());
}

// A prologue computes producers inside the contraction's kernel each time
// the block of the operand they feed is loaded into VMEM. It is decided
// whole at the operand (p -> contraction): p and the producers made for it
// alone that can follow it (cheap elementwise, broadcast and data-movement
// ops with one consumer). It pays when that cone takes few vector ops per
// element, reads at most twice the operand's bytes, and does not shrink the
// contraction's blocks so much that re-reading its operands costs more than
// the cone's own kernel moves. A cone taken only in part would make the
// kernel read the materialized middle of the chain, so it is all or nothing.
FusionEdge HeuristicPlanner::DecidePrologue(const Instruction& p, const Instruction& c) {
  constexpr double kMaxReadRatio = 2.0;  // a bf16 operand converted from f32
  // Vector ops per operand element a prologue may add to the contraction,
  // paid on every load of the operand's blocks: a slice and a convert.
  constexpr int kMaxOps = 2;
  const FusionRule rule = FusionRule::kPrologue;
  const std::vector<int32_t>& consumer_groups = groups_of_[c.index_in_parent()];
  const Instruction* contraction = &c;
  for (int32_t g : consumer_groups) {
    if (groups_[g].contraction != nullptr) contraction = groups_[g].contraction;
  }
  auto fused = [&] {
    return FusionEdge{p.index_in_parent(), c.index_in_parent(), -1, rule, true,
                      "prologue fusion: " + Describe(p) + " is computed as " + Describe(*contraction) +
                          " loads its operand blocks",
                      DecisionKind::kProfitability};
  };
  if (IsExpensive(p)) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer " + Describe(p) + " is expensive: as an operand of " +
                      Describe(*contraction) + " it would be recomputed on every load of its blocks");
  }
  if (p.users().size() != 1) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer %" + std::string(p.name()) + " has " + std::to_string(p.users().size()) +
                      " consumers: computed inside " + Describe(*contraction) +
                      " it would still be materialized for the others");
  }
  if (contraction->opcode() == hlo::Opcode::kConvolution && ChangesMemoryOrder(p)) {
    // Its blocks are rows of whole feature vectors; a transposing move
    // would gather each from across its operand. XLA's layout assignment
    // makes such a copy a kernel of its own.
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer " + Describe(p) + " changes its operand's memory order: " + Describe(*contraction) +
                      " loads rows of whole feature vectors, so the move stays a kernel of its own");
  }
  if (ClassOf(c) != OpClass::kContraction) {
    if (prologue_of_[p.index_in_parent()] == contraction) {
      for (int32_t g : consumer_groups) {
        if (std::optional<Refusal> why = CheckFit(groups_[g], p)) {
          return Refuse(p, c, rule, why->kind, std::move(why->reason));
        }
      }
      return fused();
    }
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "producer " + Describe(p) + " is read from HBM by the prologue of " + Describe(*contraction) +
                      ": a contraction computes only cheap producers made for its operand");
  }

  // The cone: p and the producers that would follow it. Its ops are
  // bounded (kMaxOps), so a cone larger than this is refused unexplored.
  constexpr size_t kMaxCone = 32;
  std::vector<const Instruction*> cone = {&p};
  for (size_t i = 0; i < cone.size(); ++i) {
    if (cone.size() > kMaxCone) {
      return Refuse(p, c, rule, DecisionKind::kProfitability,
                    "%" + std::string(p.name()) + " and the producers made for it alone are more than " +
                        std::to_string(kMaxCone) + " instructions: too much to compute inside " +
                        Describe(*contraction));
    }
    for (const Instruction* q : cone[i]->operands()) {
      if (IsFreeInstruction(*q) || q->users().size() != 1) continue;
      if (std::find(cone.begin(), cone.end(), q) != cone.end()) continue;
      if (contraction->opcode() == hlo::Opcode::kConvolution && ChangesMemoryOrder(*q)) {
        return Refuse(p, c, rule, DecisionKind::kProfitability,
                      "producer " + Describe(*q) + " changes its operand's memory order: " + Describe(*contraction) +
                          " loads rows of whole feature vectors, so the move stays a kernel of its own");
      }
      if (IsExpensive(*q) || !FeedsContractionBlocks(*q)) {
        // q would join cone[i]'s own loop kernel, but cannot follow it in.
        return Refuse(p, c, rule, DecisionKind::kProfitability,
                      "producer " + Describe(*q) + " fuses into %" + std::string(cone[i]->name()) +
                          "'s own kernel but is not computed inside " + Describe(*contraction) + ": %" +
                          std::string(p.name()) + " stays a loop kernel with it");
      }
      cone.push_back(q);
    }
  }
  auto in_cone = [&](const Instruction* x) { return std::find(cone.begin(), cone.end(), x) != cone.end(); };
  // Vector ops per element along the longest chain (reshapes and
  // broadcasts only rename), operands before users.
  std::sort(cone.begin(), cone.end(),
            [](const Instruction* a, const Instruction* b) { return a->index_in_parent() < b->index_in_parent(); });
  std::vector<int> chain_ops(cone.size(), 0);
  for (size_t i = 0; i < cone.size(); ++i) {
    const Instruction* m = cone[i];
    const bool renames = m->opcode() == hlo::Opcode::kReshape || m->opcode() == hlo::Opcode::kBroadcast;
    int deepest = 0;
    for (const Instruction* q : m->operands()) {
      auto at = std::find(cone.begin(), cone.begin() + static_cast<std::ptrdiff_t>(i), q);
      if (at != cone.begin() + static_cast<std::ptrdiff_t>(i)) deepest = std::max(deepest, chain_ops[at - cone.begin()]);
    }
    chain_ops[i] = deepest + (renames ? 0 : 1);
  }
  const int ops = chain_ops.back();  // p comes last: every other member feeds it
  if (ops > kMaxOps) {
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "computing %" + std::string(p.name()) + " and its producers inside " +
                      Describe(*contraction) + " would take " + std::to_string(ops) +
                      " vector ops per operand element on every load of its blocks (limit " +
                      std::to_string(kMaxOps) + ")");
  }
  std::vector<const Instruction*> outside;
  double read = 0, read_padded = 0;  // padded to the chip's tiles, as blocks are
  auto padded = [](const hlo::Shape& shape) {
    return shape.IsArray() ? static_cast<double>(PaddedBlockBytes(shape, StaticDims(shape)))
                           : static_cast<double>(ShapeBytes(shape));
  };
  for (const Instruction* m : cone) {
    for (int64_t k = 0; k < m->operand_count(); ++k) {
      const Instruction* q = m->operand(k);
      if (in_cone(q) || std::find(outside.begin(), outside.end(), q) != outside.end()) continue;
      outside.push_back(q);
      const bool slices = m->opcode() == hlo::Opcode::kSlice || m->opcode() == hlo::Opcode::kDynamicSlice;
      if (slices && k > 0) continue;  // start indices: scalars read once
      read += static_cast<double>(ShapeBytes(slices ? m->shape() : q->shape()));
      read_padded += padded(slices ? m->shape() : q->shape());
    }
  }
  const double operand = static_cast<double>(ShapeBytes(p.shape()));
  if (operand > 0 && read > kMaxReadRatio * operand) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", read / operand);
    return Refuse(p, c, rule, DecisionKind::kProfitability,
                  "computing %" + std::string(p.name()) + " inside " + Describe(*contraction) +
                      " would read " + text +
                      " bytes from HBM per byte of its operand on every load of its blocks (limit 2)");
  }
  for (int32_t g : consumer_groups) {
    if (std::optional<Refusal> why = CheckFit(groups_[g], p)) {
      return Refuse(p, c, rule, why->kind, std::move(why->reason));
    }
    // The cone's inputs take VMEM from the operand blocks: smaller blocks
    // re-read the operands more often, which can cost more HBM traffic than
    // the cone's own kernel (its inputs read, its result written) moves.
    TilingProblem problem = ProblemOf(groups_[g], nullptr);
    problem.inputs = groups_[g].inputs;
    Result<TileChoice> without = ChooseTile(problem, options_.tiling);
    problem.inputs.erase(std::remove(problem.inputs.begin(), problem.inputs.end(), &p), problem.inputs.end());
    for (const Instruction* q : outside) {
      if (std::find(problem.inputs.begin(), problem.inputs.end(), q) == problem.inputs.end()) problem.inputs.push_back(q);
    }
    if (static_cast<int64_t>(problem.inputs.size()) > options_.max_kernel_inputs) {
      return Refuse(p, c, rule, DecisionKind::kProfitability,
                    "computing %" + std::string(p.name()) + " inside " + Describe(*contraction) +
                        " would make its kernel read " + std::to_string(problem.inputs.size()) +
                        " arrays (limit " + std::to_string(options_.max_kernel_inputs) + ")");
    }
    Result<TileChoice> with = ChooseTile(problem, options_.tiling);
    if (!with) {
      return Refuse(p, c, rule, DecisionKind::kLegality,
                    "computing %" + std::string(p.name()) + " inside " + Describe(*contraction) + ": " +
                        with.error().message);
    }
    if (!without || !options_.contractions_run_on_plan_tiles) continue;
    const double more = LoadedBytes(*with) - LoadedBytes(*without);
    if (more > read_padded + padded(p.shape())) {
      return Refuse(p, c, rule, DecisionKind::kProfitability,
                    "computing %" + std::string(p.name()) + " inside " + Describe(*contraction) +
                        " would load " + FormatBytes(static_cast<int64_t>(more)) +
                        " more per run (its blocks: " + std::to_string(without->grid_steps()) + " -> " +
                        std::to_string(with->grid_steps()) +
                        " grid steps) than the prologue's own kernel moves");
    }
  }
  for (const Instruction* m : cone) prologue_of_[m->index_in_parent()] = contraction;
  return fused();
}

// Inputs of `group` once `p`, one of its inputs, is computed inside it.
std::vector<const Instruction*> HeuristicPlanner::InputsWith(const Group& group,
                                                             const Instruction& p) {
  std::vector<const Instruction*> inputs;
  inputs.reserve(group.inputs.size() + p.operands().size());
  for (const Instruction* in : group.inputs) {
    if (in != &p) inputs.push_back(in);
  }
  for (const Instruction* operand : p.operands()) {
    if (std::find(inputs.begin(), inputs.end(), operand) == inputs.end()) {
      inputs.push_back(operand);
    }
  }
  return inputs;
}

TilingProblem HeuristicPlanner::ProblemOf(const Group& group,
                                          const Instruction* extra_contraction) const {
  TilingProblem problem;
  const Instruction* contraction =
      group.contraction != nullptr ? group.contraction : extra_contraction;
  if (group.opaque) return problem;
  if (contraction != nullptr) {
    problem.space = TilingProblem::Space::kContraction;
    problem.anchor = contraction;
  } else if (group.reduce != nullptr) {
    problem.space = TilingProblem::Space::kReduce;
    problem.anchor = group.reduce;
  } else {
    problem.space = TilingProblem::Space::kLoop;
    problem.anchor = group.root;
  }
  problem.outputs = group.outputs;
  return problem;
}

// Why `p` cannot join `group`, or nullopt when it can.
std::optional<Refusal> HeuristicPlanner::CheckFit(const Group& group, const Instruction& p) const {
  if (group.member_count + 1 > options_.max_kernel_instructions) {
    return Refusal{DecisionKind::kProfitability, "the kernel of %" + std::string(group.root->name()) +
                                                     " already has " + std::to_string(group.member_count) +
                                                     " instructions (limit " +
                                                     std::to_string(options_.max_kernel_instructions) + ")"};
  }
  TilingProblem problem = ProblemOf(group, ClassOf(p) == OpClass::kContraction ? &p : nullptr);
  problem.inputs = InputsWith(group, p);
  // A kernel that already reads more arrays than the limit (a concatenate
  // of 200 gradients) may still take producers that add none.
  if (static_cast<int64_t>(problem.inputs.size()) > options_.max_kernel_inputs &&
      problem.inputs.size() > group.inputs.size()) {
    return Refusal{DecisionKind::kProfitability,
                   "fusing %" + std::string(p.name()) + " would make the kernel of %" +
                       std::string(group.root->name()) + " read " + std::to_string(problem.inputs.size()) +
                       " arrays (limit " + std::to_string(options_.max_kernel_inputs) + ")"};
  }
  int64_t vmem = 0;
  if (!FitsScopedVmem(problem, options_.tiling, &vmem) && !NoWorseFit(group, vmem)) {
    // Tiling would fail: no block shape fits.
    return Refusal{DecisionKind::kLegality, "fusing %" + std::string(p.name()) + " into the kernel of %" +
                                                std::string(group.root->name()) + " would need " +
                                                FormatBytes(vmem) + " of VMEM, scoped VMEM is " +
                                                FormatBytes(options_.tiling.scoped_vmem_bytes)};
  }
  return std::nullopt;
}

// Whether a kernel that already needs more than the scoped VMEM with its
// smallest blocks (a transposing kernel reading three materialized arrays)
// needs no more than `vmem_with` without the producer: a broadcast of a
// scalar replaces a whole input block by nothing, and refusing it would
// leave the kernel further over.
bool HeuristicPlanner::NoWorseFit(const Group& group, int64_t vmem_with) const {
  TilingProblem current = ProblemOf(group, nullptr);
  current.inputs = group.inputs;
  const int64_t vmem_without = MinimalVmemBytes(current, options_.tiling);
  return vmem_without > options_.tiling.scoped_vmem_bytes && vmem_with <= vmem_without;
}

void HeuristicPlanner::Commit(const Instruction& p, const Instruction& c) {
  std::vector<int32_t>& mine = groups_of_[p.index_in_parent()];
  for (int32_t g : groups_of_[c.index_in_parent()]) {
    if (std::find(mine.begin(), mine.end(), g) != mine.end()) continue;  // via another consumer
    Group& group = groups_[g];
    group.inputs = InputsWith(group, p);
    ++group.member_count;
    if (ClassOf(p) == OpClass::kContraction) group.contraction = &p;
    if (ClassOf(p) == OpClass::kReduce) group.reduce = &p;
    if (ClassOf(p) == OpClass::kWindow) group.window = &p;
    mine.push_back(g);
  }
}

void HeuristicPlanner::StartGroup(const Instruction& p) {
  Group group;
  group.root = &p;
  group.member_count = 1;
  group.outputs = {&p};
  for (const Instruction* operand : p.operands()) {
    if (std::find(group.inputs.begin(), group.inputs.end(), operand) == group.inputs.end()) {
      group.inputs.push_back(operand);
    }
  }
  OpClass c = ClassOf(p);
  group.opaque = c == OpClass::kOpaque;
  group.first_root = group.last_root = p.index_in_parent();
  if (c == OpClass::kContraction) group.contraction = &p;
  if (c == OpClass::kReduce) group.reduce = &p;
  if (c == OpClass::kWindow) group.window = &p;
  int32_t id = static_cast<int32_t>(groups_.size());
  groups_.push_back(std::move(group));
  groups_of_[p.index_in_parent()].push_back(id);
  own_group_[p.index_in_parent()] = id;
  rep_.push_back(id);
}

}  // namespace internal

std::vector<FusionEdge> HeuristicEdges(const hlo::Computation& computation,
                                       const PlannerOptions& options) {
  return internal::HeuristicPlanner(computation, options).Run();
}

}  // namespace kiln::fusion
