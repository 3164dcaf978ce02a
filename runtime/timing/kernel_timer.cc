#include "runtime/timing/kernel_timer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/timing/block_plan.h"
#include "runtime/timing/collective_time.h"
#include "runtime/timing/kernel_space.h"
#include "runtime/timing/step_schedule.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

std::string Join(const std::vector<int64_t>& blocks) {
  std::string out;
  for (int64_t b : blocks) {
    if (!out.empty()) out += 'x';
    out += std::to_string(b);
  }
  return out.empty() ? "scalar" : out;
}

Bound Classify(double compute, double memory, double overhead, double ici) {
  if (ici > 0 && ici >= compute && ici >= memory && ici >= overhead) return Bound::kIci;
  if (compute >= memory && compute >= overhead) return Bound::kCompute;
  if (memory >= overhead) return Bound::kMemory;
  return Bound::kOverhead;
}

// Every input and output once, tile-padded as laid out.
double IdealBytes(const KernelDescription& kernel) {
  double bytes = 0;
  for (const hlo::Shape* s : kernel.inputs) bytes += PaddedArrayBytes(*s);
  for (const hlo::Shape* s : kernel.outputs) bytes += PaddedArrayBytes(*s);
  return bytes;
}

// Inputs the grid moves more than once (beyond rounding), and how often.
std::vector<KernelProfile::Reread> Rereads(const BlockPlan& plan, size_t inputs) {
  std::vector<KernelProfile::Reread> out;
  for (size_t i = 0; i < inputs && i < plan.problem.streams.size(); ++i) {
    const double whole = WholeBytes(plan.problem.streams[i], plan.problem.dims);
    const double times = whole > 0 ? plan.cost.stream_bytes[i] / whole : 0;
    if (times > 1.01) out.push_back({static_cast<int>(i), times});
  }
  return out;
}

// Seconds of contraction `c` run as a kernel of its own through the block
// pipeline (fill, steps bound by MXU or panel transfers, drain), on the
// blocks the search picks for it: a dot in a loop body costs what the same
// dot costs as an entry kernel, less its launch.
Result<double> TiledContractionSeconds(const Contraction& c, const ChipSpec& chip, const TimingOptions& options) {
  KernelWork work;
  work.contractions.push_back(c);
  const IterationSpace space = LoneContractionSpace(work.contractions.front());
  TimingOptions searched = options;
  searched.dot_tiles.reset();  // forced tiles are for the kernel's own dot
  static const ProgramTiling kNoTiling;
  KILN_ASSIGN_OR_RETURN(BlockPlan plan, PlanBlocks(space, work, kNoTiling, chip, searched));
  return plan.cost.seconds;
}

// Whether the steps of `computation` can be scheduled on their own: it
// runs no nested control flow or calls, whose steps are timed apart.
bool SchedulesAlone(const hlo::Computation& computation) {
  for (const auto& instr : computation.instructions()) {
    switch (instr->opcode()) {
      case hlo::Opcode::kWhile:
      case hlo::Opcode::kConditional:
      case hlo::Opcode::kCall:
      case hlo::Opcode::kAsyncStart:
        return false;
      default:
        break;
    }
  }
  return true;
}

// Seconds all loop steps take: per computation whose steps all run equally
// often and that holds collectives, one run's overlapped schedule
// (step_schedule.h) times its runs; otherwise each step in turn.
double ScheduledStepSeconds(const std::vector<LoopStep>& steps, const std::vector<TimedStep>& timed) {
  std::unordered_map<const hlo::Computation*, std::vector<size_t>> groups;
  std::vector<const hlo::Computation*> order;
  for (size_t i = 0; i < steps.size(); ++i) {
    const hlo::Computation* parent = steps[i].instruction->parent();
    auto [it, added] = groups.try_emplace(parent);
    if (added) order.push_back(parent);
    it->second.push_back(i);
  }
  double seconds = 0;
  for (const hlo::Computation* parent : order) {
    const std::vector<size_t>& members = groups[parent];
    bool uniform = true, collectives = false;
    for (size_t i : members) {
      uniform &= steps[i].times == steps[members.front()].times;
      collectives |= timed[i].on_links;
    }
    if (parent != nullptr && uniform && collectives && SchedulesAlone(*parent)) {
      std::vector<TimedStep> run;
      for (size_t i : members) run.push_back(timed[i]);
      seconds += OverlappedSeconds(run) * steps[members.front()].times;
      continue;
    }
    for (size_t i : members) seconds += timed[i].seconds * steps[i].times;
  }
  return seconds;
}

// The profile of a kernel run from HBM without a block pipeline. Work inside
// loops and branches runs step by step (KernelWork::loop_steps): each step
// is bound by its own compute (its dots and convolutions tiled as kernels
// of their own), HBM traffic or, on a slice, ICI transfer, and the steps
// add up, except that collectives overlap the compute steps that do not
// wait for them (ScheduledStepSeconds); the rest of the kernel overlaps its
// compute with moving its operands and results once.
Result<KernelProfile> TimeUntiled(const KernelDescription& kernel, const KernelWork& work, const ChipSpec& chip,
                                  const TimingOptions& options) {
  KernelProfile p;
  p.ideal_bytes = IdealBytes(kernel);
  double compute = work.vector_ops / chip.vector_flops;
  for (const Contraction& c : work.contractions) compute += MxuSeconds(c, c.gemm, chip) * c.multiplicity;
  if (work.loop_steps.empty()) {
    p.bytes = work.loop_bytes + p.ideal_bytes;
    p.compute_seconds = compute;
    p.memory_seconds = p.bytes / chip.hbm_bytes_per_s;
    p.grid_steps = 1 + work.loop_iterations;
    p.overhead_seconds = chip.launch_overhead_s + chip.step_overhead_s * p.grid_steps;
    p.seconds = p.overhead_seconds + std::max(p.compute_seconds, p.memory_seconds);
    p.tiling = "untiled";
    return p;
  }
  double step_compute = 0, step_bytes = 0, step_ici = 0, step_runs = 0;
  std::vector<TimedStep> timed;
  timed.reserve(work.loop_steps.size());
  p.steps.reserve(work.loop_steps.size());
  for (const LoopStep& step : work.loop_steps) {
    const double vector = step.vector_ops / chip.vector_flops;
    double roofline = vector, c = vector;  // c: its contractions tiled
    for (const Contraction& k : step.contractions) {
      const double mxu = MxuSeconds(k, k.gemm, chip);
      roofline += mxu;
      if (k.result_in_vmem) {
        c += mxu;
        continue;
      }
      KILN_ASSIGN_OR_RETURN(double tiled, TiledContractionSeconds(k, chip, options));
      c += tiled;
    }
    const double m = step.bytes / chip.hbm_bytes_per_s;
    double ici = 0;
    if (step.collective && options.chips() > 1) {
      KILN_ASSIGN_OR_RETURN(CollectiveTime t,
                            TimeCollective(*step.instruction, *options.topology, chip, options.assignment));
      ici = t.seconds;
      t.runs = step.times;
      p.collectives.push_back(std::move(t));
    }
    step_compute += roofline * step.times;
    step_bytes += step.bytes * step.times;
    step_ici += ici * step.times;
    timed.push_back({step.instruction, std::max({c, m, ici}), ici > 0});
    step_runs += step.times;
    p.steps.push_back({std::string(step.instruction->name()), step.times,
                       (timed.back().seconds + chip.step_overhead_s) * step.times, step.bytes * step.times,
                       Classify(c, m, chip.step_overhead_s, ici)});
  }
  const double step_seconds = ScheduledStepSeconds(work.loop_steps, timed);
  const double outside_compute = std::max(0.0, compute - step_compute);
  const double outside_memory = p.ideal_bytes / chip.hbm_bytes_per_s;
  p.bytes = p.ideal_bytes + step_bytes;
  p.compute_seconds = compute;
  p.memory_seconds = p.bytes / chip.hbm_bytes_per_s;
  p.ici_seconds = step_ici;
  p.grid_steps = 1 + step_runs;
  p.overhead_seconds = chip.launch_overhead_s + chip.step_overhead_s * p.grid_steps;
  p.seconds = p.overhead_seconds + std::max(outside_compute, outside_memory) + step_seconds;
  p.tiling = "untiled; loop ops step by step";
  return p;
}

// The collectives a kernel's entry performs (an async-start's wrapped one
// included), and whether it completes an async pair instead.
struct KernelCollectives {
  std::vector<const hlo::Instruction*> started;
  bool completes = false;
};

bool WrapsCollective(const hlo::Instruction& async) {
  for (const hlo::Computation* callee : async.called_computations()) {
    for (const auto& instr : callee->instructions()) {
      if (IsTimedCollective(instr->opcode())) return true;
    }
  }
  return false;
}

KernelCollectives FindCollectives(const hlo::Module& module) {
  KernelCollectives found;
  for (const auto& owned : module.entry()->instructions()) {
    const hlo::Instruction& instr = *owned;
    switch (instr.opcode()) {
      case hlo::Opcode::kAllGatherDone:
      case hlo::Opcode::kAllReduceDone:
      case hlo::Opcode::kCollectivePermuteDone:
        found.completes = true;
        break;
      case hlo::Opcode::kAsyncStart:
        for (const hlo::Computation* callee : instr.called_computations()) {
          for (const auto& inner : callee->instructions()) {
            if (IsTimedCollective(inner->opcode())) found.started.push_back(inner.get());
          }
        }
        break;
      case hlo::Opcode::kAsyncDone:
        found.completes = found.completes || WrapsCollective(instr);
        break;
      default:
        if (IsTimedCollective(instr.opcode())) found.started.push_back(&instr);
    }
  }
  return found;
}

// A collective kernel on a slice: its HBM traffic and any reduction as an
// untiled kernel, overlapped with its ICI transfers. The -done half of an
// async pair only waits: its transfer was timed at the -start.
Result<std::optional<KernelProfile>> TimeOnSlice(const KernelDescription& kernel, const KernelWork& work,
                                                 const ChipSpec& chip, const TimingOptions& options) {
  KernelCollectives found = FindCollectives(*kernel.module);
  if (found.started.empty() && !found.completes) return std::nullopt;
  KernelProfile p;
  if (found.started.empty()) {
    p.overhead_seconds = chip.launch_overhead_s;
    p.seconds = p.overhead_seconds;
    p.grid_steps = 1;
    p.tiling = "ici (async done: timed at its start)";
    return p;
  }
  KILN_ASSIGN_OR_RETURN(p, TimeUntiled(kernel, work, chip, options));
  std::string routes;
  for (const hlo::Instruction* c : found.started) {
    KILN_ASSIGN_OR_RETURN(CollectiveTime t, TimeCollective(*c, *options.topology, chip, options.assignment));
    p.ici_seconds += t.seconds;
    if (!routes.empty()) routes += "; ";
    routes += t.kind + " " + t.route;
    p.collectives.push_back(std::move(t));
  }
  p.seconds = p.overhead_seconds + std::max({p.compute_seconds, p.memory_seconds, p.ici_seconds});
  p.tiling = "ici: " + routes;
  p.on_links = true;
  return std::optional<KernelProfile>(std::move(p));
}

}  // namespace

Result<KernelProfile> TimeKernel(const KernelDescription& kernel, const ChipSpec& chip,
                                 const TimingOptions& options, const ControlFlowCounts* counts) {
  auto fail = [&](Error e) { return std::move(e).WithContext("kernel " + std::string(kernel.name)); };
  if (kernel.module == nullptr) return InternalError("kernel " + std::string(kernel.name) + ": no module");
  WorkOptions work_options;
  work_options.counts = counts;
  work_options.iteration_budget = options.iteration_budget;
  Result<KernelWork> work = AnalyzeKernelWork(*kernel.module, work_options);
  if (!work) return fail(work.error());

  std::optional<KernelProfile> on_slice;
  if (options.chips() > 1) {
    Result<std::optional<KernelProfile>> sliced = TimeOnSlice(kernel, *work, chip, options);
    if (!sliced) return fail(sliced.error());
    on_slice = std::move(*sliced);
  }
  IterationSpace space = MakeIterationSpace(*kernel.module, *work, kernel.inputs, kernel.outputs);
  KernelProfile p;
  if (on_slice) {
    p = std::move(*on_slice);
  } else if (space.kind == SpaceKind::kUntiled || kernel.kind == "horizontal") {
    Result<KernelProfile> untiled = TimeUntiled(kernel, *work, chip, options);
    if (!untiled) return fail(untiled.error());
    p = std::move(*untiled);
    if (kernel.kind == "horizontal") {
      // Its parts share no grid and it holds its arrays whole, single
      // buffered: it reads them all, computes every part, then writes them
      // all, in one launch. Nothing overlaps the transfers.
      p.seconds = p.overhead_seconds + p.memory_seconds + p.compute_seconds;
    }
  } else {
    static const ProgramTiling kNoTiling;
    Result<BlockPlan> plan =
        PlanBlocks(space, *work, kernel.tiling != nullptr ? *kernel.tiling : kNoTiling, chip, options);
    if (!plan) return fail(plan.error());
    const GridCost& cost = plan->cost;
    p.bytes = cost.bytes;
    p.ideal_bytes = IdealBytes(kernel);
    p.rereads = Rereads(*plan, kernel.inputs.size());
    p.compute_seconds = cost.compute_seconds;
    p.memory_seconds = cost.transfer_seconds;
    p.overhead_seconds = cost.overhead_seconds + chip.launch_overhead_s;
    p.grid_steps = cost.steps;
    p.seconds = cost.seconds + chip.launch_overhead_s;
    p.tiling = Join(plan->blocks) + " (" + plan->source + ")";
  }
  p.name = std::string(kernel.name);
  p.kind = std::string(kernel.kind);
  p.flops = work->Flops();
  p.peak_seconds = work->PeakSeconds(chip);
  p.bound = Classify(p.compute_seconds, p.memory_seconds, p.overhead_seconds, p.ici_seconds);
  double mxu_flops = work->ContractionFlops();
  if (mxu_flops > 0 && p.seconds > 0) {
    const Contraction* main = work->MainContraction();
    double peak = main != nullptr ? MxuPeakFlops(*main, chip) : chip.bf16_flops;
    p.mxu_utilization = std::min(1.0, mxu_flops / (p.seconds * peak));
  }
  return p;
}

}  // namespace kiln::runtime::timing
