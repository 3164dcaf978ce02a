#include "compiler/cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>

#include "compiler/fusion/op_class.h"
#include "compiler/hlo/op_attributes.h"
#include "runtime/chip/op_kinds.h"

namespace kiln::cost {
namespace {

using fusion::ClassOf;
using fusion::GemmDims;
using fusion::GemmOf;
using fusion::IsExpensive;
using fusion::IsFreeInstruction;
using fusion::Kernel;
using fusion::OpClass;
using fusion::ShapeBytes;
using fusion::TileChoice;

using hlo::Instruction;
using hlo::Opcode;

constexpr int kMaxCallDepth = 16;

struct Work {
  double vector_flops = 0;
  double mxu_seconds = 0;  // MXU time at the operand type's rate
  double mxu_flops = 0;
  double extra_seconds = 0;  // called computations
};

double MxuRate(const Instruction& op, const runtime::ChipSpec& chip) {
  hlo::PrimitiveType type = op.operand(0)->shape().element_type();
  hlo::PrimitiveType rhs = op.operand(1)->shape().element_type();
  if (hlo::BitWidth(type) <= 8) return runtime::MxuPeakRate(chip, type, rhs);
  if (type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kC64) {
    Result<std::vector<hlo::Precision>> precision = hlo::GetOperandPrecision(op);
    hlo::Precision p = hlo::Precision::kDefault;
    if (precision) {
      for (hlo::Precision q : *precision) p = std::max(p, q);
    }
    return chip.bf16_flops / runtime::MxuPasses(p);
  }
  if (hlo::BitWidth(type) >= 64) return chip.vector_flops / 4;
  return chip.bf16_flops;
}

// known_trip_count={"n":"12"} inside a while's backend_config.
int64_t KnownTripCount(const Instruction& loop) {
  const std::pmr::string* config = loop.AttributeText("backend_config");
  if (config == nullptr) return 1;
  size_t at = config->find("known_trip_count");
  if (at == std::string::npos) return 1;
  at = config->find("\"n\"", at);
  if (at == std::string::npos) return 1;
  at = config->find_first_of("0123456789", at + 3);
  if (at == std::string::npos) return 1;
  int64_t n = std::strtoll(config->c_str() + at, nullptr, 10);
  return n > 0 ? n : 1;
}

bool IsControlFlow(const Instruction& instr) {
  return instr.opcode() == Opcode::kWhile || instr.opcode() == Opcode::kConditional ||
         instr.opcode() == Opcode::kCall;
}

double Roofline(const Work& work, double hbm_bytes, int64_t steps, const runtime::ChipSpec& chip) {
  double compute = std::max(work.mxu_seconds, work.vector_flops / chip.vector_flops);
  double memory = hbm_bytes / chip.hbm_bytes_per_s;
  return std::max(compute, memory) + static_cast<double>(steps) * chip.step_overhead_s +
         chip.launch_overhead_s + work.extra_seconds;
}

// The work of instructions, following called computations down to
// kMaxCallDepth levels. A computation called from many places (c1 calls c0
// twice, c2 calls c1 twice, ...) is costed once per depth and remembered, so
// the walk is linear in the module, not in the number of call paths. Lives
// for one estimate; not thread-safe.
class WorkEstimator {
 public:
  explicit WorkEstimator(const runtime::ChipSpec& chip) : chip_(chip) {}

  Work InstructionWork(const Instruction& instr, int depth);

 private:
  using Key = std::pair<const hlo::Computation*, int>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.first) * 31 + static_cast<size_t>(k.second);
    }
  };

  // Roofline seconds of each instruction as its own kernel, summed.
  double ComputationSeconds(const hlo::Computation& computation, int depth);
  // The work of a fused computation's instructions, summed.
  Work FusedWork(const hlo::Computation& computation, int depth);

  const runtime::ChipSpec& chip_;
  std::unordered_map<Key, double, KeyHash> seconds_;
  std::unordered_map<Key, Work, KeyHash> fused_;
};

Work WorkEstimator::InstructionWork(const Instruction& instr, int depth) {
  const runtime::ChipSpec& chip = chip_;
  Work work;
  double elements =
      std::max<int64_t>(instr.shape().IsArray() ? instr.shape().ElementCount() : 0, 0);
  switch (ClassOf(instr)) {
    case OpClass::kElementwise:
      work.vector_flops = elements * (IsExpensive(instr) ? 4 : 1);
      return work;
    case OpClass::kReduce:
      for (const Instruction* operand : instr.operands()) {
        if (operand->shape().IsArray()) {
          work.vector_flops += std::max<int64_t>(operand->shape().ElementCount(), 0);
        }
      }
      return work;
    case OpClass::kWindow: {
      // A multiply-add (depthwise) or one combine (reduce-window) per tap
      // and result element, on the vector unit.
      Result<hlo::Window> window = hlo::GetWindow(instr);
      double taps = 1;
      if (window) {
        for (const hlo::WindowDimension& d : window->dimensions)
          taps *= static_cast<double>(std::max<int64_t>(d.size, 1));
      }
      work.vector_flops = elements * taps * (instr.opcode() == Opcode::kConvolution ? 2 : 1);
      return work;
    }
    case OpClass::kContraction: {
      GemmDims g = GemmOf(instr);
      work.mxu_flops = 2.0 * g.batch * g.m * g.n * g.k;
      work.mxu_seconds = work.mxu_flops / MxuRate(instr, chip);
      return work;
    }
    default:
      break;
  }
  if (depth >= kMaxCallDepth) return work;
  switch (instr.opcode()) {
    case Opcode::kWhile: {
      double body = 0;
      for (const hlo::Computation* c : instr.called_computations()) {
        body += ComputationSeconds(*c, depth + 1);
      }
      work.extra_seconds = body * static_cast<double>(KnownTripCount(instr));
      return work;
    }
    case Opcode::kConditional:
      for (const hlo::Computation* c : instr.called_computations()) {
        work.extra_seconds = std::max(work.extra_seconds, ComputationSeconds(*c, depth + 1));
      }
      return work;
    case Opcode::kCall:
    case Opcode::kAsyncStart:
      for (const hlo::Computation* c : instr.called_computations()) {
        work.extra_seconds += ComputationSeconds(*c, depth + 1);
      }
      return work;
    case Opcode::kFusion:
      // XLA's fused computation: its work, without its own HBM traffic.
      for (const hlo::Computation* c : instr.called_computations()) {
        Work w = FusedWork(*c, depth + 1);
        work.vector_flops += w.vector_flops;
        work.mxu_flops += w.mxu_flops;
        work.mxu_seconds += w.mxu_seconds;
        work.extra_seconds += w.extra_seconds;
      }
      return work;
    case Opcode::kSort: {
      double n = std::max(elements, 2.0);
      work.vector_flops = n * std::log2(n);
      return work;
    }
    default:
      return work;
  }
}

Work WorkEstimator::FusedWork(const hlo::Computation& computation, int depth) {
  const Key key{&computation, depth};
  if (auto it = fused_.find(key); it != fused_.end()) return it->second;
  Work work;
  for (const auto& inner : computation.instructions()) {
    Work w = InstructionWork(*inner, depth);
    work.vector_flops += w.vector_flops;
    work.mxu_flops += w.mxu_flops;
    work.mxu_seconds += w.mxu_seconds;
    work.extra_seconds += w.extra_seconds;
  }
  fused_.emplace(key, work);
  return work;
}

double WorkEstimator::ComputationSeconds(const hlo::Computation& computation, int depth) {
  const Key key{&computation, depth};
  if (auto it = seconds_.find(key); it != seconds_.end()) return it->second;
  double total = 0;
  for (const auto& instr : computation.instructions()) {
    if (IsFreeInstruction(*instr)) continue;
    double bytes = static_cast<double>(ShapeBytes(instr->shape()));
    for (const Instruction* operand : instr->operands()) {
      bytes += static_cast<double>(ShapeBytes(operand->shape()));
    }
    total += Roofline(InstructionWork(*instr, depth), bytes, 1, chip_);
  }
  seconds_.emplace(key, total);
  return total;
}

}  // namespace

KernelCost EstimateKernel(const hlo::Computation& computation, const fusion::Kernel& kernel,
                          const runtime::ChipSpec& chip) {
  const auto& instrs = computation.instructions();
  Work work;
  WorkEstimator estimator(chip);
  const Instruction* contraction = nullptr;
  for (int64_t i : kernel.instructions) {
    Work w = estimator.InstructionWork(*instrs[i], 0);
    work.vector_flops += w.vector_flops;
    work.mxu_flops += w.mxu_flops;
    work.mxu_seconds += w.mxu_seconds;
    work.extra_seconds += w.extra_seconds;
    if (ClassOf(*instrs[i]) == OpClass::kContraction) contraction = instrs[i].get();
  }
  const TileChoice& tile = kernel.tile;
  bool gemm = tile.tiled && contraction != nullptr && tile.grid.size() == 4;
  double bytes = 0;
  for (int64_t i : kernel.inputs) {
    const Instruction* in = instrs[i].get();
    double b = static_cast<double>(ShapeBytes(in->shape()));
    if (gemm && in == contraction->operand(0)) b *= static_cast<double>(tile.grid[2]);
    if (gemm && in == contraction->operand(1)) b *= static_cast<double>(tile.grid[1]);
    bytes += b;
  }
  for (int64_t r : kernel.roots) bytes += static_cast<double>(ShapeBytes(instrs[r]->shape()));
  if (kernel.instructions.size() == 1 && IsControlFlow(*instrs[kernel.instructions[0]])) {
    bytes = 0;  // the loop state is aliased; the called computations move the data
  }
  KernelCost cost;
  cost.vector_flops = work.vector_flops;
  cost.mxu_flops = work.mxu_flops;
  cost.hbm_bytes = bytes;
  cost.seconds = Roofline(work, bytes, tile.grid_steps(), chip);
  return cost;
}

PlanCost EstimatePlan(const hlo::Computation& computation, const fusion::FusionPlan& plan,
                      const runtime::ChipSpec& chip) {
  PlanCost cost;
  cost.kernels.reserve(plan.kernels.size());
  for (const Kernel& kernel : plan.kernels) {
    cost.kernels.push_back(EstimateKernel(computation, kernel, chip));
    cost.seconds += cost.kernels.back().seconds;
  }
  return cost;
}

}  // namespace kiln::cost
