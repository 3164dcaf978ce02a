#include "compiler/fusion/kernel_schedule.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <string>
#include <unordered_map>

#include "compiler/fusion/op_class.h"
#include "compiler/passes/side_effects.h"

namespace kiln::fusion {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// Whether an instruction has an effect whose order matters: a side effect
// (passes/side_effects.h), looking into the bodies of loops, calls and
// conditionals instead of taking every one as ordered. Memoized per
// computation.
class OrderedEffects {
 public:
  bool Of(const Instruction& instr) {
    const Opcode op = instr.opcode();
    if (op != Opcode::kWhile && op != Opcode::kCall && op != Opcode::kConditional) {
      return passes::HasSideEffect(instr);
    }
    for (const hlo::Computation* called : instr.called_computations()) {
      if (Of(*called)) return true;
    }
    return false;
  }

 private:
  bool Of(const hlo::Computation& computation) {
    auto [it, added] = memo_.try_emplace(&computation, false);
    if (!added) return it->second;
    bool ordered = false;
    for (const auto& instr : computation.instructions()) {
      if (Of(*instr)) {
        ordered = true;
        break;
      }
    }
    memo_[&computation] = ordered;
    return ordered;
  }

  std::unordered_map<const hlo::Computation*, bool> memo_;
};

// The kernels' dependency graph and the buffers they define and read.
struct ScheduleGraph {
  int64_t kernel_count = 0;
  std::vector<std::vector<int64_t>> dependents;  // kernel -> kernels after it
  std::vector<int64_t> dependency_count;         // kernel -> distinct kernels before it
  std::vector<int64_t> first_root;               // kernel -> smallest root index (program order)
  std::vector<std::vector<int64_t>> roots;       // kernel -> the buffers it defines
  // Buffers are kernel roots, named by entry index.
  std::vector<double> bytes;                     // entry index -> bytes (roots only)
  std::vector<char> pinned;                      // returned by the computation: live to the end
  std::vector<std::vector<int64_t>> reads;       // kernel -> distinct buffers it reads
  std::vector<std::vector<int64_t>> readers;     // buffer -> distinct kernels reading it
};

Error CycleError(const hlo::Computation& computation, const ScheduleGraph& graph, int64_t k) {
  return InvalidArgumentError("fused edges form a cycle through the kernel of %" +
                              std::string(computation.instructions()[graph.first_root[k]]->name()));
}

void AddDependency(ScheduleGraph& graph, int64_t before, int64_t after) {
  graph.dependents[before].push_back(after);
  ++graph.dependency_count[after];
}

Result<ScheduleGraph> BuildGraph(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                 const std::vector<int64_t>& root_kernel) {
  const auto& instrs = computation.instructions();
  const int64_t n = computation.instruction_count();
  ScheduleGraph graph;
  graph.kernel_count = static_cast<int64_t>(kernels.size());
  graph.dependents.resize(graph.kernel_count);
  graph.dependency_count.assign(graph.kernel_count, 0);
  graph.first_root.assign(graph.kernel_count, 0);
  graph.roots.resize(graph.kernel_count);
  graph.bytes.assign(n, 0);
  graph.pinned.assign(n, 0);
  graph.reads.resize(graph.kernel_count);
  graph.readers.resize(n);

  std::vector<int64_t> buffer_of(n, -1);  // root -> itself
  for (int64_t k = 0; k < graph.kernel_count; ++k) {
    graph.roots[k] = kernels[k].roots;
    graph.first_root[k] = *std::min_element(kernels[k].roots.begin(), kernels[k].roots.end());
    for (int64_t r : kernels[k].roots) {
      buffer_of[r] = r;
      graph.bytes[r] = static_cast<double>(ShapeBytes(instrs[r]->shape()));
    }
  }
  std::vector<int64_t> sources;
  for (int64_t k = 0; k < graph.kernel_count; ++k) {
    std::vector<int64_t> deps;
    for (int64_t x : kernels[k].inputs) CollectSourceIds(instrs[x].get(), root_kernel, /*follow_control=*/true, deps);
    for (int64_t x : kernels[k].instructions) {
      for (const Instruction* pred : instrs[x]->control_predecessors()) {
        CollectSourceIds(pred, root_kernel, /*follow_control=*/true, deps);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int64_t d : deps) {
      if (d == k) return std::unexpected(CycleError(computation, graph, k));
      AddDependency(graph, d, k);
    }
    std::vector<int64_t>& reads = graph.reads[k];
    for (int64_t x : kernels[k].inputs) CollectSourceIds(instrs[x].get(), buffer_of, /*follow_control=*/false, reads);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (int64_t b : reads) graph.readers[b].push_back(k);
  }
  if (computation.root() != nullptr) {
    sources.clear();
    CollectSourceIds(computation.root(), buffer_of, /*follow_control=*/false, sources);
    for (int64_t b : sources) graph.pinned[b] = 1;
  }
  return graph;
}

// Topological order, choosing among the ready kernels by `better`, a strict
// order on kernel indices; re-ranks a ready kernel when `rank_changed`
// reports it after a kernel runs. Fails on a cycle.
template <typename Rank>
Result<std::vector<int64_t>> TopologicalOrder(const hlo::Computation& computation, const ScheduleGraph& graph,
                                              Rank& rank) {
  using Entry = std::pair<typename Rank::Key, int64_t>;  // (key, kernel); smallest first
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  std::vector<int64_t> pending = graph.dependency_count;
  std::vector<typename Rank::Key> key_of(graph.kernel_count);
  std::vector<char> done(graph.kernel_count, 0);
  auto push = [&](int64_t k) {
    key_of[k] = rank.KeyOf(k);
    ready.emplace(key_of[k], k);
  };
  for (int64_t k = 0; k < graph.kernel_count; ++k) {
    if (pending[k] == 0) push(k);
  }
  std::vector<int64_t> order;
  order.reserve(graph.kernel_count);
  std::vector<int64_t> changed;
  while (!ready.empty()) {
    auto [key, k] = ready.top();
    ready.pop();
    if (done[k] || key != key_of[k]) continue;  // stale entry of a re-ranked kernel
    done[k] = 1;
    order.push_back(k);
    changed.clear();
    rank.Ran(k, changed);
    for (int64_t c : changed) {
      if (!done[c] && pending[c] == 0) push(c);
    }
    for (int64_t d : graph.dependents[k]) {
      if (--pending[d] == 0) push(d);
    }
  }
  if (static_cast<int64_t>(order.size()) != graph.kernel_count) {
    for (int64_t k = 0; k < graph.kernel_count; ++k) {
      if (pending[k] > 0) return std::unexpected(CycleError(computation, graph, k));
    }
  }
  return order;
}

// Program order: the kernel with the first root written first.
struct ProgramRank {
  using Key = int64_t;
  const ScheduleGraph& graph;
  Key KeyOf(int64_t k) const { return graph.first_root[k]; }
  void Ran(int64_t, std::vector<int64_t>&) {}
};

// Memory order: the kernel freeing the most bytes net of those it keeps
// defined first, then program order.
class MemoryRank {
 public:
  using Key = std::pair<double, int64_t>;  // (-net bytes freed, first root)

  explicit MemoryRank(const ScheduleGraph& graph) : graph_(graph), remaining_(graph.readers.size()) {
    for (size_t b = 0; b < graph.readers.size(); ++b) remaining_[b] = static_cast<int64_t>(graph.readers[b].size());
    scheduled_.assign(graph.kernel_count, 0);
  }

  Key KeyOf(int64_t k) const { return {-NetFreed(k), graph_.first_root[k]}; }

  // `k` ran: its buffers lose a reader; a buffer left with one reader makes
  // that reader free it, so its rank changes.
  void Ran(int64_t k, std::vector<int64_t>& changed) {
    scheduled_[k] = 1;
    for (int64_t b : graph_.reads[k]) {
      if (--remaining_[b] != 1 || graph_.pinned[b]) continue;
      for (int64_t reader : graph_.readers[b]) {
        if (!scheduled_[reader]) changed.push_back(reader);
      }
    }
  }

 private:
  double NetFreed(int64_t k) const {
    double net = 0;
    for (int64_t b : graph_.reads[k]) {
      if (remaining_[b] == 1 && !graph_.pinned[b]) net += graph_.bytes[b];
    }
    for (int64_t r : graph_.roots[k]) {
      if (!graph_.readers[r].empty() || graph_.pinned[r]) net -= graph_.bytes[r];
    }
    return net;
  }

  const ScheduleGraph& graph_;
  std::vector<int64_t> remaining_;  // buffer -> readers not yet run
  std::vector<char> scheduled_;
};

// The most bytes of kernel outputs live at once when the kernels run in
// `order`: a kernel's roots are allocated while its inputs are live.
double PeakLiveBytes(const ScheduleGraph& graph, const std::vector<int64_t>& order) {
  std::vector<int64_t> position(graph.kernel_count);
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<int64_t>(p);
  std::vector<double> freed_after(order.size() + 1, 0);
  for (int64_t k = 0; k < graph.kernel_count; ++k) {
    for (int64_t r : graph.roots[k]) {
      if (graph.pinned[r]) continue;
      int64_t last = position[k];
      for (int64_t reader : graph.readers[r]) last = std::max(last, position[reader]);
      freed_after[last] += graph.bytes[r];
    }
  }
  double live = 0, peak = 0;
  for (size_t p = 0; p < order.size(); ++p) {
    for (int64_t r : graph.roots[order[p]]) live += graph.bytes[r];
    peak = std::max(peak, live);
    live -= freed_after[p];
  }
  return peak;
}

int64_t ClampBytes(double bytes) {
  return bytes >= static_cast<double>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                            : static_cast<int64_t>(bytes);
}

// The tuner's order: the smallest preferred rank first, then program order.
struct PreferredRank {
  using Key = std::pair<int64_t, int64_t>;
  const ScheduleGraph& graph;
  const std::vector<int64_t>& preferred;
  Key KeyOf(int64_t k) const { return {preferred[k], graph.first_root[k]}; }
  void Ran(int64_t, std::vector<int64_t>&) {}
};

// The graph with ordered effects chained in program order (which every
// schedule keeps), and that program order.
struct OrderedGraph {
  ScheduleGraph graph;
  std::vector<int64_t> program_order;
};

Result<OrderedGraph> BuildOrderedGraph(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                       const std::vector<int64_t>& root_kernel) {
  OrderedGraph out;
  KILN_ASSIGN_OR_RETURN(out.graph, BuildGraph(computation, kernels, root_kernel));
  ProgramRank program_rank{out.graph};
  KILN_ASSIGN_OR_RETURN(out.program_order, TopologicalOrder(computation, out.graph, program_rank));
  OrderedEffects effects;
  int64_t previous_ordered = -1;
  for (int64_t k : out.program_order) {
    const bool ordered = std::any_of(kernels[k].instructions.begin(), kernels[k].instructions.end(),
                                     [&](int64_t i) { return effects.Of(*computation.instructions()[i]); });
    if (!ordered) continue;
    if (previous_ordered >= 0) AddDependency(out.graph, previous_ordered, k);
    previous_ordered = k;
  }
  return out;
}

}  // namespace

Result<KernelSchedule> ScheduleKernels(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                       const std::vector<int64_t>& root_kernel) {
  KILN_ASSIGN_OR_RETURN(OrderedGraph ordered, BuildOrderedGraph(computation, kernels, root_kernel));
  const ScheduleGraph& graph = ordered.graph;
  std::vector<int64_t>& program_order = ordered.program_order;

  MemoryRank memory_rank(graph);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> list_order, TopologicalOrder(computation, graph, memory_rank));

  KernelSchedule schedule;
  const double program_peak = PeakLiveBytes(graph, program_order);
  const double list_peak = PeakLiveBytes(graph, list_order);
  schedule.program_order_live_bytes = ClampBytes(program_peak);
  if (list_peak < program_peak) {
    schedule.order = std::move(list_order);
    schedule.kind = ScheduleKind::kListOrder;
    schedule.peak_live_bytes = ClampBytes(list_peak);
  } else {
    schedule.order = std::move(program_order);
    schedule.peak_live_bytes = ClampBytes(program_peak);
  }
  return schedule;
}

Result<KernelSchedule> ScheduleKernelsPreferring(const hlo::Computation& computation,
                                                 const std::vector<Kernel>& kernels,
                                                 const std::vector<int64_t>& root_kernel,
                                                 const std::vector<int64_t>& preferred) {
  if (preferred.size() != kernels.size()) {
    return InvalidArgumentError("a preferred kernel order ranks " + std::to_string(preferred.size()) +
                                " kernels, the plan has " + std::to_string(kernels.size()));
  }
  KILN_ASSIGN_OR_RETURN(OrderedGraph ordered, BuildOrderedGraph(computation, kernels, root_kernel));
  PreferredRank rank{ordered.graph, preferred};
  KernelSchedule schedule;
  KILN_ASSIGN_OR_RETURN(schedule.order, TopologicalOrder(computation, ordered.graph, rank));
  schedule.kind = ScheduleKind::kPreferred;
  schedule.peak_live_bytes = ClampBytes(PeakLiveBytes(ordered.graph, schedule.order));
  schedule.program_order_live_bytes = ClampBytes(PeakLiveBytes(ordered.graph, ordered.program_order));
  return schedule;
}

Result<KernelGraph> KernelDependencies(const hlo::Computation& computation, const std::vector<Kernel>& kernels,
                                       const std::vector<int64_t>& root_kernel) {
  KILN_ASSIGN_OR_RETURN(OrderedGraph ordered, BuildOrderedGraph(computation, kernels, root_kernel));
  ScheduleGraph& graph = ordered.graph;
  KernelGraph out;
  out.before.resize(kernels.size());
  for (int64_t k = 0; k < graph.kernel_count; ++k) {
    for (int64_t d : graph.dependents[k]) out.before[d].push_back(k);
  }
  for (std::vector<int64_t>& list : out.before) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  out.reads = std::move(graph.reads);
  out.defines = std::move(graph.roots);
  out.bytes = std::move(graph.bytes);
  out.returned = std::move(graph.pinned);
  return out;
}

}  // namespace kiln::fusion
