// FusionPlan: how the entry computation of a module is cut into kernels.
//
// A plan is a plain value (copyable, comparable, no pointers into the IR):
// instructions are named by their index_in_parent() in the entry computation
// of the module the plan was made for, after the pass pipeline has run. The
// plan is only meaningful together with that exact module.
//
// The source of truth is the list of edges. Every producer->consumer operand
// edge between two kernel-forming instructions, and every pair of sibling
// kernels that read the same value, has one FusionEdge holding a decision
// (fused or not) and the reason for it. Kernels are derived from the edges
// (FormKernels in kernel_formation.h): an autotuner flips `fused` on edges,
// re-forms the kernels, edits `Kernel::tile` and re-validates
// (ValidatePlan), without touching the IR.
//
// Kernel formation rules (what lowering can rely on):
//  - "Free" instructions (IsFreeInstruction: parameter, constant,
//    get-tuple-element, tuple, bitcast, after-all, add-dependency,
//    opt-barrier, domain) are never in a kernel: parameters and constants
//    are buffers, the others alias the buffers of their operands.
//  - An instruction is materialized (written to HBM, the root of a kernel)
//    when it is the computation's root, has a free user, has no users, or
//    has a user whose edge to it is not fused.
//  - A kernel is rooted at a materialized instruction and contains every
//    producer reachable backwards over fused edges. A cheap producer fused
//    into several consumers is duplicated (recomputed) in each of their
//    kernels; the heuristic never fuses an expensive producer that has more
//    than one consumer.
//  - Fused sibling edges then merge kernels (multi-output fusion): the
//    merged kernel has several roots, and one root may feed another (an
//    expensive value computed in its reduction's kernel, which also writes
//    it for its other consumers). A sibling edge one of whose ends is not
//    materialized (every consumer computes it) merges nothing.
//  - A fused horizontal sibling edge (rule kHorizontal) merges two loop or
//    reduction kernels of different iteration shapes into one kernel of
//    kind kHorizontal (XLA's horizontal fusion: one launch instead of
//    two). It has no common grid, so it runs untiled, on whole arrays,
//    which must fit the scoped VMEM together; contractions, window ops and
//    opaque ops never join one.
//  - Control flow (while, conditional, call), collectives, custom calls,
//    sort and the other opaque ops are single-instruction kernels; their
//    called computations are executed as-is by lowering (for the heuristic
//    and tuned plans, with loop bodies and branches already fused:
//    body_fusion.h).
//  - Under the `given` plan, each XLA `fusion` instruction of the entry is
//    one kernel of kind kGiven; its fused computation is XLA's decision.
//
// Thread-compatible value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/format/plan_kind.h"

namespace kiln::fusion {

// Which plan the planner makes: the kinds shared with the executable and
// the cache (runtime/format/plan_kind.h). The planner makes none, heuristic
// and given plans; a tuned plan comes from the autotuner.
using runtime::PlanKind;
using runtime::PlanKindName;

enum class KernelKind : uint8_t {
  kSingle,       // one instruction
  kLoop,         // elementwise chain with its broadcasts/reshapes
  kInput,        // reduction with its fused producers
  kOutput,       // dot/convolution with an elementwise epilogue
  kMultiOutput,  // several roots (sibling fusion)
  kGiven,        // an XLA `fusion` instruction kept as-is
  kHorizontal,   // independent parts of different shapes, whole arrays, one launch
};
std::string_view KernelKindName(KernelKind kind);  // "single", "loop", ...

// Which rule an edge was considered under.
enum class FusionRule : uint8_t {
  kLoop,         // elementwise/data-movement producer into a loop consumer
  kInput,        // producer into a reduction
  kOutput,       // dot/convolution into its elementwise epilogue
  kMultiOutput,  // two sibling kernels that read the same value
  kNone,         // no rule applies (opaque producer or consumer)
  kPrologue,     // cheap producer into a dot/convolution operand
  kHorizontal,   // two sibling kernels of different shapes, run whole in one launch
};
std::string_view FusionRuleName(FusionRule rule);

// What kind of decision an edge holds, for the autotuner and for users.
//  - kLegality: a refusal because fusing would be wrong or impossible: an op
//    that takes or gives no fused operands (opaque ops, a reduction or
//    contraction as a dot's operand, a reduction inside a kernel), more than
//    one MXU operation or a reduction
//    next to a dot in one kernel, siblings that cannot share one loop, a
//    merge that would (or might) close a cycle, or a kernel that would not
//    fit scoped VMEM even with the smallest blocks. Never flip these.
//  - kProfitability: a choice. A refusal the heuristic made to avoid
//    recomputation or oversized kernels (its limits in PlannerOptions), an
//    edge the `none` or `given` plan leaves unfused although fusing would be
//    legal, and every fused edge (un-fusing is always legal). The autotuner
//    may flip only these.
enum class DecisionKind : uint8_t {
  kProfitability,
  kLegality,
};
std::string_view DecisionKindName(DecisionKind kind);  // "profitability", "legality"

struct FusionEdge {
  // Producer->consumer edge: `producer` is an operand of `consumer`;
  // `sibling` is -1. Sibling edge: `consumer` and `sibling` are the roots of
  // two kernels that both read `producer` (which may be free, e.g. a
  // parameter), or, when `producer` == `sibling`, the kernel of `consumer`
  // reads `sibling` directly and, merged, computes it itself
  // (producer-consumer multi-output fusion).
  int64_t producer = -1;
  int64_t consumer = -1;
  int64_t sibling = -1;
  FusionRule rule = FusionRule::kNone;
  bool fused = false;
  // Why: "loop fusion of elementwise chain", or the refusal, e.g. "producer
  // %dot.3 is expensive and has 2 consumers: fusing would recompute it".
  std::string reason;
  DecisionKind kind = DecisionKind::kProfitability;

  bool is_sibling() const { return sibling >= 0; }
  bool operator==(const FusionEdge&) const = default;
};

// Block shape of one array a kernel reads or writes (HBM <-> VMEM).
struct BlockShape {
  int64_t instruction = -1;         // the value (entry index)
  std::vector<int64_t> dimensions;  // block extent per dimension of its shape
  int64_t bytes = 0;                // one block, padded to the chip's tiles
  bool operator==(const BlockShape&) const = default;
};

// The tile choice of one kernel (tiling.h).
struct TileChoice {
  bool tiled = false;  // false: runs on whole arrays from HBM
  // When tiled: one block per Kernel::inputs entry and one per
  // Kernel::roots entry, in the same order; empty when untiled. Dot and
  // convolution operands have 2-D blocks of their GEMM view: {bm, bk} for
  // the lhs, {bk, bn} for the rhs; then grid is {batch, M/bm, N/bn, K/bk}.
  std::vector<BlockShape> inputs;
  std::vector<BlockShape> outputs;
  std::vector<int64_t> grid;      // grid steps per iteration dimension
  int64_t accumulator_bytes = 0;  // f32 accumulators (dot, reduce)
  // 2 x (input + output blocks) + accumulators; must fit scoped VMEM.
  int64_t vmem_bytes = 0;
  int64_t grid_steps() const;  // product of grid (1 when empty)
  bool operator==(const TileChoice&) const = default;
};

struct Kernel {
  int64_t id = 0;  // position in FusionPlan::kernels
  KernelKind kind = KernelKind::kSingle;
  // Instructions computed by the kernel, in topological order (entry indices).
  std::vector<int64_t> instructions;
  // Materialized values the kernel writes (subset of instructions).
  std::vector<int64_t> roots;
  // Values the kernel reads from HBM: operands of its instructions computed
  // elsewhere (other kernels' roots or free instructions). Sorted.
  std::vector<int64_t> inputs;
  TileChoice tile;
  bool operator==(const Kernel&) const = default;
};

struct FusionPlan {
  PlanKind kind = PlanKind::kHeuristic;
  std::vector<FusionEdge> edges;
  // In execution order: every kernel comes after the kernels whose roots it
  // reads.
  std::vector<Kernel> kernels;
  // Entry index -> id of the kernel whose root it is; -1 for free
  // instructions and for instructions only computed inside other kernels.
  std::vector<int64_t> root_kernel;
  // Scoped VMEM the tiles were chosen for.
  int64_t scoped_vmem_bytes = 0;

  int64_t fused_edge_count() const;
  bool operator==(const FusionPlan&) const = default;
};

}  // namespace kiln::fusion
