#include "runtime/timing/kernel_work.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/op_class.h"
#include "runtime/chip/op_kinds.h"
#include "runtime/timing/collective_time.h"
#include "runtime/timing/fused_attention.h"
#include "runtime/timing/prologue_sources.h"
#include "runtime/timing/step_traffic.h"
#include "runtime/timing/tpu_tiles.h"
#include "runtime/timing/trip_count.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

// Vector-unit operations per element of an elementwise op: one for plain
// arithmetic, more for ops the unit runs as short sequences (division,
// square roots) or as polynomial/EUP sequences (transcendentals).
double ElementwiseCost(Opcode op) {
  switch (VectorOpKindOf(op)) {
    case VectorOpKind::kMultiStep: return 4;
    case VectorOpKind::kTranscendental: return 8;
    case VectorOpKind::kSimple: break;
  }
  return 1;
}

// Ops that only rename or alias data (no vector work, no traffic of their own).
bool IsFree(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kBroadcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kGetDimensionSize:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return true;
    default:
      return false;
  }
}

// Ops the block pipeline does not model; their kernels are timed whole.
bool IsOpaque(Opcode op) {
  switch (op) {
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kSort:
    case Opcode::kScatter:
    case Opcode::kGather:
    case Opcode::kCustomCall:
    case Opcode::kFft:
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
    case Opcode::kSelectAndScatter:
    case Opcode::kTopK:
    case Opcode::kRngBitGenerator:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kDynamicUpdateSlice:
      return true;
    default:
      return hlo::CategoryOf(op) == hlo::OpcodeCategory::kCollective;
  }
}

double Elements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const hlo::Shape& s : shape.tuple_shapes()) total += Elements(s);
    return total;
  }
  if (!shape.IsArray()) return 0;
  double n = 1;
  for (int64_t d : shape.dimensions()) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

// Instructions one kernel's walk may visit, counting a computation once per
// call site that reaches it (a real kernel visits thousands at most).
constexpr int64_t kMaxWalkedInstructions = int64_t{1} << 24;

class WorkWalker {
 public:
  explicit WorkWalker(const WorkOptions& options) : options_(options) {}

  // Walks `computation` once per call site that reaches it. Recursion is
  // one level per nested computation, which the parser bounds
  // (hlo/call_nesting.h); the instructions walked in all are bounded by
  // kMaxWalkedInstructions, since call sites can multiply (c1 calls c0
  // twice, c2 calls c1 twice, ...).
  Status Walk(const Computation& computation, double times, bool in_loop, bool entry) {
    walked_ += computation.instruction_count();
    if (walked_ > kMaxWalkedInstructions) {
      return ResourceExhaustedError("computation %" + computation.name() + ": the kernel's calls expand to more than " +
                                    std::to_string(kMaxWalkedInstructions) +
                                    " instructions counting every call site; the timing model walks each one");
    }
    for (const auto& owned : computation.instructions()) {
      KILN_RETURN_IF_ERROR(Visit(*owned, times, in_loop, entry));
    }
    return Ok();
  }

  KernelWork Take() { return std::move(work_); }

  // The prologue instructions of the kernel's entry computation, each with
  // the kernel input (entry parameter) its blocks come from.
  void NotePrologues(const Computation& entry) {
    for (auto [instr, param] : PrologueSources(entry)) {
      if (param >= 0) prologue_input_[instr] = param;
    }
  }

 private:
  // Vector work of one element of a scalar computation (a combiner).
  static double ScalarCost(const Computation& computation) {
    double cost = 0;
    for (const auto& i : computation.instructions()) {
      if (hlo::IsElementwise(i->opcode())) cost += ElementwiseCost(i->opcode());
    }
    return std::max(cost, 1.0);
  }

  // Starts the visit of `instr`, a loop or branch instruction run `times`
  // more times: its step (one per instruction, however many call sites
  // reach it), whose per-run figures are filled in on the first visit only.
  void BeginStep(const Instruction& instr, double times) {
    auto [it, added] = step_of_.try_emplace(&instr, work_.loop_steps.size());
    if (added) {
      LoopStep step;
      step.instruction = &instr;
      step.collective = IsTimedCollective(instr.opcode());
      step.bytes = StepTrafficBytes(instr);
      work_.loop_steps.push_back(std::move(step));
    }
    work_.loop_steps[it->second].times += times;
    step_ = added ? static_cast<int64_t>(it->second) : -1;
  }

  // Vector work over `shape`; inside a loop, its result written and read
  // back once per run, and the vector work of the current step (whose
  // traffic BeginStep set).
  void AddVector(const hlo::Shape& shape, double ops_per_element, double times, bool in_loop) {
    const double ops = PaddedVectorElements(shape) * ops_per_element;
    work_.vector_ops += ops * times;
    work_.vector_flops += Elements(shape) * ops_per_element * times;
    if (!in_loop) return;
    const double bytes = 2 * PaddedArrayBytes(shape);
    work_.loop_bytes += bytes * times;
    if (step_ >= 0) work_.loop_steps[step_].vector_ops += ops;
  }

  // Visits `instr`; the vector work of a contraction's prologue is also
  // kept per kernel input it is computed from.
  Status Visit(const Instruction& instr, double times, bool in_loop, bool entry) {
    if (prologue_input_.empty()) return VisitOp(instr, times, in_loop, entry);
    auto it = prologue_input_.find(&instr);
    if (it == prologue_input_.end()) return VisitOp(instr, times, in_loop, entry);
    const double before = work_.vector_ops;
    KILN_RETURN_IF_ERROR(VisitOp(instr, times, in_loop, entry));
    std::vector<double>& per_input = work_.prologue_vector_ops;
    if (per_input.size() <= static_cast<size_t>(it->second)) per_input.resize(it->second + 1, 0.0);
    per_input[it->second] += work_.vector_ops - before;
    return Ok();
  }

  // The same for the computation of the entry-level fusion `fusion` (an XLA
  // fusion kept as written), whose parameters are the fusion's operands.
  void NotePrologues(const Instruction& fusion) {
    for (const Computation* callee : fusion.called_computations()) {
      for (auto [instr, param] : PrologueSources(*callee)) {
        if (param < 0 || param >= fusion.operand_count()) continue;
        const Instruction* operand = fusion.operand(param);
        if (operand->opcode() != Opcode::kParameter) continue;
        prologue_input_[instr] = operand->parameter_number();
      }
    }
  }

  Status VisitOp(const Instruction& instr, double times, bool in_loop, bool entry) {
    const Opcode op = instr.opcode();
    if (IsOpaque(op)) work_.opaque = true;
    if (IsFree(op)) return Ok();
    if (in_fusion_) {
      step_ = fusion_step_;  // a fused op: part of its fusion's step
    } else {
      step_ = -1;
      if (in_loop && !CallsComputations(op)) BeginStep(instr, times);
    }
    if (hlo::IsElementwise(op)) {
      AddVector(instr.shape(), ElementwiseCost(op), times, in_loop);
      return Ok();
    }
    switch (op) {
      case Opcode::kConvolution:
        if (hlo::IsDepthwiseConvolution(instr)) {
          // A multiply and an add per window tap and output element, on
          // the vector unit (compiler/hlo/op_class.h).
          KILN_ASSIGN_OR_RETURN(hlo::Window window, hlo::GetWindow(instr));
          double taps = 1;
          for (const hlo::WindowDimension& d : window.dimensions) taps *= static_cast<double>(d.size);
          AddVector(instr.shape(), 2 * taps, times, in_loop);
          return Ok();
        }
        if (hlo::IsDepthwiseFilterGradient(instr)) {
          // A multiply and an add per element of the output gradient and
          // weight tap (each tap a spatial position of the result).
          KILN_ASSIGN_OR_RETURN(hlo::ConvolutionDimensionNumbers dn,
                                hlo::GetConvolutionDimensionNumbers(instr));
          double taps = 1;
          for (int64_t d : dn.output_spatial_dimensions)
            taps *= static_cast<double>(instr.shape().dimensions(d));
          AddVector(instr.operand(1)->shape(), 2 * taps, times, in_loop);
          return Ok();
        }
        [[fallthrough]];
      case Opcode::kDot: {
        KILN_ASSIGN_OR_RETURN(Contraction c, DescribeContraction(instr));
        c.multiplicity = times;
        if (!entry) c.instruction = nullptr;  // not a candidate for the grid
        work_.contractions.push_back(c);
        if (in_loop) work_.loop_bytes += 2 * PaddedArrayBytes(instr.shape()) * times;
        if (step_ >= 0) {
          c.multiplicity = 1;
          c.instruction = &instr;  // the step's kernel tiles it on its own
          work_.loop_steps[step_].contractions.push_back(c);
        }
        return Ok();
      }
      case Opcode::kReduce: {
        KILN_ASSIGN_OR_RETURN(const Computation* combiner, hlo::GetCalledComputation(instr, "to_apply"));
        double cost = ScalarCost(*combiner);
        double before = work_.vector_ops;
        for (int64_t i = 0; i < instr.operand_count() / 2; ++i) {
          AddVector(instr.operand(i)->shape(), cost, times, in_loop);
        }
        if (entry && (widest_reduce_ops_ < work_.vector_ops - before)) {
          widest_reduce_ops_ = work_.vector_ops - before;
          work_.widest_reduce = &instr;
        }
        return Ok();
      }
      case Opcode::kReduceWindow: {
        KILN_ASSIGN_OR_RETURN(hlo::Window window, hlo::GetWindow(instr));
        double size = 1;
        for (const hlo::WindowDimension& d : window.dimensions) size *= static_cast<double>(d.size);
        AddVector(instr.shape(), size, times, in_loop);
        return Ok();
      }
      case Opcode::kSort: {
        const hlo::Shape& keys = instr.operand(0)->shape();
        KILN_ASSIGN_OR_RETURN(hlo::SortConfig config, hlo::GetSortConfig(instr));
        double n = config.dimension < keys.rank() ? static_cast<double>(keys.dimensions(config.dimension)) : 1;
        double stages = std::ceil(std::log2(std::max(n, 2.0)));
        AddVector(instr.shape(), stages * (stages + 1) / 2, times, in_loop);  // bitonic network
        return Ok();
      }
      case Opcode::kRng: AddVector(instr.shape(), 4, times, in_loop); return Ok();
      case Opcode::kRngBitGenerator: AddVector(instr.shape(), 8, times, in_loop); return Ok();
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kAsyncStart: {
        // Inside a loop a fusion is one step: its ops run as one kernel.
        const bool one_step = in_loop && op == Opcode::kFusion && !in_fusion_;
        if (entry && !in_loop && op == Opcode::kFusion) NotePrologues(instr);
        if (one_step) {
          BeginStep(instr, times);
          in_fusion_ = true;
          fusion_step_ = step_;
        }
        for (const Computation* callee : instr.called_computations()) {
          Status walked = Walk(*callee, times, in_loop, entry && op == Opcode::kFusion);
          if (!walked) {
            if (one_step) in_fusion_ = false;
            return walked;
          }
        }
        if (one_step) in_fusion_ = false;
        return Ok();
      }
      case Opcode::kMap: {
        KILN_ASSIGN_OR_RETURN(const Computation* f, hlo::GetCalledComputation(instr, "to_apply"));
        AddVector(instr.shape(), ScalarCost(*f), times, in_loop);
        return Ok();
      }
      case Opcode::kWhile: return VisitWhile(instr, times);
      case Opcode::kConditional: return VisitConditional(instr, times);
      case Opcode::kDynamicUpdateSlice:
        AddVector(instr.operand(1)->shape(), 1, times, in_loop);
        return Ok();
      case Opcode::kScatter:
        AddVector(instr.operand(instr.operand_count() - 1)->shape(), 2, times, in_loop);
        return Ok();
      case Opcode::kCustomCall:
        if (IsFusedAttention(instr)) return AddFusedAttention(instr, times, in_loop);
        AddVector(instr.shape(), 1, times, in_loop);
        return Ok();
      default:
        // Data movement (copy, transpose, slice, concatenate, pad, gather,
        // iota, ...) and anything else: one operation per element produced.
        AddVector(instr.shape(), 1, times, in_loop);
        return Ok();
    }
  }

  // A fused attention's GEMMs and softmax (fused_attention.h). Inside a
  // loop its step moves its floating-point results written and read back
  // (not the rng state or workspace), never its scores.
  Status AddFusedAttention(const Instruction& instr, double times, bool in_loop) {
    KILN_ASSIGN_OR_RETURN(FusedAttentionWork attention, DescribeFusedAttention(instr));
    work_.vector_ops += attention.vector_ops * times;
    work_.vector_flops += attention.vector_ops * times;
    for (Contraction c : attention.contractions) {
      if (step_ >= 0) work_.loop_steps[step_].contractions.push_back(c);
      c.multiplicity = times;
      c.instruction = nullptr;  // not a candidate for the grid
      work_.contractions.push_back(c);
    }
    if (!in_loop) return Ok();
    double results = 0;
    auto add = [&](const hlo::Shape& s) {
      if (hlo::IsFloatingPoint(s.element_type())) results += PaddedArrayBytes(s);
    };
    if (instr.shape().IsTuple()) {
      for (const hlo::Shape& s : instr.shape().tuple_shapes()) add(s);
    } else {
      add(instr.shape());
    }
    work_.loop_bytes += 2 * results * times;
    if (step_ >= 0) {
      work_.loop_steps[step_].vector_ops += attention.vector_ops;
      if (!in_fusion_) work_.loop_steps[step_].bytes = 2 * results;
    }
    return Ok();
  }

  Status VisitWhile(const Instruction& w, double times) {
    double iterations = 0;
    if (options_.counts != nullptr) {
      auto it = options_.counts->while_iterations.find(&w);
      if (it == options_.counts->while_iterations.end()) {
        return InternalError("while loop %" + std::string(w.name()) +
                             ": the executor reported no trip count");
      }
      iterations = static_cast<double>(it->second);
    } else {
      KILN_ASSIGN_OR_RETURN(int64_t trips, StaticTripCount(w));
      iterations = static_cast<double>(trips) * times;
    }
    work_.loop_iterations += iterations;
    if (work_.loop_iterations > options_.iteration_budget) {
      return ResourceExhaustedError("while loop %" + std::string(w.name()) + " runs " +
                                    std::to_string(static_cast<int64_t>(iterations)) +
                                    " iterations, over the step budget of " +
                                    std::to_string(static_cast<int64_t>(options_.iteration_budget)));
    }
    KILN_ASSIGN_OR_RETURN(const Computation* body, hlo::GetCalledComputation(w, "body"));
    KILN_ASSIGN_OR_RETURN(const Computation* cond, hlo::GetCalledComputation(w, "condition"));
    KILN_RETURN_IF_ERROR(Walk(*body, iterations, /*in_loop=*/true, /*entry=*/false));
    double checks = iterations + (options_.counts != nullptr ? 1 : times);
    return Walk(*cond, checks, /*in_loop=*/true, /*entry=*/false);
  }

  Status VisitConditional(const Instruction& c, double times) {
    std::vector<const Computation*> branches;
    if (c.FindAttribute("branch_computations") != nullptr) {
      KILN_ASSIGN_OR_RETURN(branches, hlo::GetCalledComputations(c, "branch_computations"));
    } else {
      KILN_ASSIGN_OR_RETURN(const Computation* t, hlo::GetCalledComputation(c, "true_computation"));
      KILN_ASSIGN_OR_RETURN(const Computation* f, hlo::GetCalledComputation(c, "false_computation"));
      branches = {t, f};
    }
    if (options_.counts != nullptr) {
      auto it = options_.counts->branch_runs.find(&c);
      if (it == options_.counts->branch_runs.end() || it->second.size() != branches.size()) {
        return InternalError("conditional %" + std::string(c.name()) +
                             ": the executor reported no branch counts");
      }
      for (size_t b = 0; b < branches.size(); ++b) {
        KILN_RETURN_IF_ERROR(Walk(*branches[b], static_cast<double>(it->second[b]), true, false));
      }
      return Ok();
    }
    const Instruction* predicate = c.operand(0);
    if (predicate->opcode() != Opcode::kConstant || predicate->literal() == nullptr ||
        predicate->literal()->elided()) {
      return UnimplementedError("timing-only: conditional %" + std::string(c.name()) +
                                " branch depends on data");
    }
    // pred selects true/false; s32 selects a branch, out of range the last.
    double value = predicate->literal()->GetAsDouble(0);
    size_t index = branches.size() - 1;
    if (predicate->shape().element_type() == hlo::PrimitiveType::kPred) {
      index = value != 0 ? 0 : 1;
    } else if (value >= 0 && value < static_cast<double>(branches.size())) {
      index = static_cast<size_t>(value);
    }
    return Walk(*branches[index], times, true, false);
  }

  // Ops whose work is that of the computations they call (walked as steps
  // of their own inside loops).
  static bool CallsComputations(Opcode op) {
    switch (op) {
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kAsyncStart:
      case Opcode::kWhile:
      case Opcode::kConditional:
        return true;
      default:
        return false;
    }
  }

  const WorkOptions& options_;
  KernelWork work_;
  std::unordered_map<const Instruction*, size_t> step_of_;
  std::unordered_map<const Instruction*, int64_t> prologue_input_;  // NotePrologues
  int64_t step_ = -1;  // the step the current instruction's work goes to, or -1
  bool in_fusion_ = false;    // walking a loop fusion's ops: they share its step
  int64_t fusion_step_ = -1;  // that step, or -1 when its figures are in already
  double widest_reduce_ops_ = 0;
  int64_t walked_ = 0;
};

}  // namespace

double KernelWork::ContractionFlops() const {
  double total = 0;
  for (const Contraction& c : contractions) total += c.gemm.Flops() * c.multiplicity;
  return total;
}

double KernelWork::PeakSeconds(const ChipSpec& chip) const {
  double seconds = vector_flops / chip.bf16_flops;
  for (const Contraction& c : contractions) {
    seconds += c.gemm.Flops() * c.multiplicity / MxuPeakFlops(c, chip);
  }
  return seconds;
}

const Contraction* KernelWork::MainContraction() const {
  const Contraction* best = nullptr;
  for (const Contraction& c : contractions) {
    if (c.instruction == nullptr) continue;
    if (best == nullptr || c.gemm.Flops() > best->gemm.Flops()) best = &c;
  }
  return best;
}

Result<KernelWork> AnalyzeKernelWork(const hlo::Module& module, const WorkOptions& options) {
  if (module.entry() == nullptr) return InvalidArgumentError("kernel module " + module.name() + " has no entry");
  WorkWalker walker(options);
  walker.NotePrologues(*module.entry());
  KILN_RETURN_IF_ERROR(walker.Walk(*module.entry(), 1, /*in_loop=*/false, /*entry=*/true));
  return walker.Take();
}

}  // namespace kiln::runtime::timing
