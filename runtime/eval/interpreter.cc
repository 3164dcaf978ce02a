#include "runtime/eval/interpreter.h"

#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/dynamic_shapes.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/shape_ops.h"
#include "runtime/eval/slice_rendezvous.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;

// Calls nest (while bodies, fusions, kernels calling back): bound the depth
// so a malformed module cannot overflow the stack.
constexpr int kMaxCallDepth = 256;

// The shape a value has, for argument checks.
bool ValueMatches(const Value& value, const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    if (!value.is_tuple() || value.elements().size() != shape.tuple_shapes().size()) return false;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      if (!ValueMatches(value.elements()[i], shape.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (value.is_tuple() || value.empty()) return false;
  const hlo::Shape& have = value.array().shape();
  if (shape.IsToken()) return have.IsToken();
  if (have.element_type() != shape.element_type() ||
      have.dimensions().size() != shape.dimensions().size()) {
    return false;
  }
  // A dynamic dimension (`<=N`) takes any size up to its bound.
  for (size_t d = 0; d < have.dimensions().size(); ++d) {
    const int64_t got = have.dimensions()[d];
    const int64_t want = shape.dimensions()[d];
    if (shape.is_dynamic_dimension(static_cast<int64_t>(d)) ? got > want : got != want) return false;
  }
  return value.array().elided() || value.array().element_count() == have.ElementCount();
}

std::string ValueShapeText(const Value& value) {
  if (value.empty()) return "nothing";
  if (!value.is_tuple()) return value.array().shape().ToString();
  std::string out = "(";
  for (size_t i = 0; i < value.elements().size(); ++i) {
    if (i > 0) out += ", ";
    out += ValueShapeText(value.elements()[i]);
  }
  return out + ")";
}

// Splits a literal produced by a kernel into a Value, moving its arrays.
Value ValueFromLiteral(Literal literal) {
  if (!literal.shape().IsTuple()) return Value::Own(std::move(literal));
  std::vector<Literal> elements = literal.ReleaseTupleElements();
  std::vector<Value> values;
  values.reserve(elements.size());
  for (Literal& e : elements) values.push_back(ValueFromLiteral(std::move(e)));
  return Value::Tuple(std::move(values));
}

// Array operands as literals; fails on tuple-valued operands.
Result<std::vector<const Literal*>> ArrayOperands(const Instruction& instr,
                                                  std::span<const Value> operands) {
  std::vector<const Literal*> literals;
  literals.reserve(operands.size());
  for (const Value& v : operands) {
    if (v.is_tuple() || v.empty()) {
      return std::unexpected(InstrError(instr, "expected array operands, got a tuple"));
    }
    literals.push_back(&v.array());
  }
  return literals;
}

using ShapeOpFn = Result<Literal> (*)(const Instruction&, LiteralSpan);

ShapeOpFn FindShapeOp(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast: return &EvalBroadcast;
    case Opcode::kReshape: return &EvalReshape;
    case Opcode::kBitcast: return &EvalBitcast;
    case Opcode::kTranspose: return &EvalTranspose;
    case Opcode::kSlice: return &EvalSlice;
    case Opcode::kDynamicSlice: return &EvalDynamicSlice;
    case Opcode::kDynamicUpdateSlice: return &EvalDynamicUpdateSlice;
    case Opcode::kConcatenate: return &EvalConcatenate;
    case Opcode::kPad: return &EvalPad;
    case Opcode::kIota: return &EvalIota;
    case Opcode::kReverse: return &EvalReverse;
    case Opcode::kBitcastConvert: return &EvalBitcastConvert;
    default: return nullptr;
  }
}

// A unit of work is about one element produced (a nanosecond or so of host
// time). Running a computation (a loop trip's condition or body, a call, a
// reducer) and dispatching an instruction cost far more than an element, so
// they are charged what they take: without these a while(true) over scalars
// spent a budget sized for large arrays some 50 times more slowly (minutes,
// where a loop over big arrays ends in seconds).
constexpr int64_t kComputationRunUnits = 256;
constexpr int64_t kInstructionUnits = 32;

int64_t AddUnits(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

// Units of work an instruction costs beyond its dispatch: the elements it
// produces, or 1 for ops that only pass values along (shared, never copied).
int64_t WorkUnits(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
      return 1;
    default:
      return instr.shape().IsArray() ? instr.shape().ElementCount() : 1;
  }
}

Value U32Scalar(const hlo::Shape& shape, uint32_t v) {
  Literal lit(shape);
  if (lit.data().size() >= sizeof(uint32_t)) lit.Set<uint32_t>(0, v);
  return Value::Own(std::move(lit));
}

}  // namespace

Value ZeroValue(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (const hlo::Shape& s : shape.tuple_shapes()) elements.push_back(ZeroValue(s));
    return Value::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Value::Own(Literal(hlo::Shape::Token()));
  return Value::Own(Literal(shape));
}

Interpreter::Interpreter(const EvalOptions& options)
    : options_(options), steps_left_(options.step_budget), rng_state_(options.rng_seed) {}

Interpreter::~Interpreter() {
  if (options_.units_charged != nullptr) *options_.units_charged += options_.step_budget - steps_left_;
}

Status Interpreter::Charge(int64_t elements) {
  steps_left_ -= std::max<int64_t>(elements, 1);
  const bool stopped = options_.interrupt != nullptr && options_.interrupt->stopped();
  if (steps_left_ >= 0 && !stopped) return Ok();
  // The innermost running loop says most about a runaway run.
  const std::string in = !active_whiles_.empty()
                             ? " in while loop %" + std::string(active_whiles_.back()->name())
                         : current_ != nullptr ? " at %" + std::string(current_->name())
                                               : std::string();
  if (stopped) {
    const StopReason reason = options_.interrupt->reason();
    return Error::Coded(StopErrorCode(reason), "stopped (" + std::string(StopReasonText(reason)) + ")" + in);
  }
  return ResourceExhaustedError("step budget of " + std::to_string(options_.step_budget) + " exhausted" + in);
}

uint64_t Interpreter::NextRngSeed() {
  // splitmix64: a well-mixed, reproducible sequence from the options' seed.
  uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Result<const ComputationPlan*> Interpreter::PlanFor(const hlo::Computation& computation) {
  auto it = plans_.find(&computation);
  if (it != plans_.end()) return it->second.get();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ComputationPlan> plan, BuildComputationPlan(computation));
  const ComputationPlan* raw = plan.get();
  plans_.emplace(&computation, std::move(plan));
  return raw;
}

Status Interpreter::CheckArguments(const hlo::Computation& computation,
                                   std::span<const Value> args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
    return InvalidArgumentError("computation %" + computation.name() + " takes " +
                                std::to_string(computation.parameter_count()) + " arguments, got " +
                                std::to_string(args.size()));
  }
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    const Instruction* param = computation.parameters()[i];
    if (param == nullptr) {
      return InvalidArgumentError("computation %" + computation.name() + " has no parameter " + std::to_string(i));
    }
    if (!ValueMatches(args[i], param->shape())) {
      return InvalidArgumentError("argument " + std::to_string(i) + " of %" + computation.name() +
                                  " has shape " + ValueShapeText(args[i]) + " but parameter %" +
                                  std::string(param->name()) + " is " + param->shape().ToString());
    }
  }
  return Ok();
}

Result<Value> Interpreter::Run(const hlo::Computation& computation, std::span<const Value> args) {
  KILN_RETURN_IF_ERROR(CheckArguments(computation, args));
  if (computation.root() == nullptr) {
    return InvalidArgumentError("computation %" + computation.name() + " has no root");
  }
  if (depth_ >= kMaxCallDepth) {
    return InvalidArgumentError("calls nest deeper than " + std::to_string(kMaxCallDepth) + " in %" +
                                computation.name());
  }
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(++d) {}
    ~DepthGuard() { --depth; }
  } guard(depth_);

  KILN_RETURN_IF_ERROR(Charge(kComputationRunUnits));
  KILN_ASSIGN_OR_RETURN(const ComputationPlan* plan, PlanFor(computation));
  std::vector<Value> values(static_cast<size_t>(computation.instruction_count()));
  std::vector<Value> operands;
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const ComputationPlan::Step& step = plan->steps[s];
    if (step.region >= 0) {
      KILN_RETURN_IF_ERROR(RunRegion(plan->regions[step.region], values));
    } else {
      const Instruction& instr = *step.instr;
      current_ = &instr;
      Value& slot = values[instr.index_in_parent()];
      if (instr.opcode() == Opcode::kParameter) {
        slot = args[instr.parameter_number()];
      } else {
        operands.clear();
        for (const Instruction* op : instr.operands()) {
          operands.push_back(values[op->index_in_parent()]);
        }
        KILN_RETURN_IF_ERROR(Charge(AddUnits(kInstructionUnits, WorkUnits(instr))));
        Result<Value> v = EvalInstruction(instr, operands);
        if (!v) return std::unexpected(std::move(v.error()));
        PropagateDynamicSizes(instr, operands, *v);
        slot = std::move(*v);
      }
    }
    for (int64_t dead : plan->release_after[s]) values[dead] = Value();
  }
  return std::move(values[computation.root()->index_in_parent()]);
}

Status Interpreter::RunRegion(const ElementwiseRegion& region, std::vector<Value>& values) {
  current_ = region.members.back().instr;
  KILN_RETURN_IF_ERROR(
      Charge(AddUnits(kInstructionUnits, region.element_count * static_cast<int64_t>(region.members.size()))));
  std::vector<const Literal*> inputs;
  inputs.reserve(region.inputs.size());
  for (const Instruction* in : region.inputs) {
    const Value& v = values[in->index_in_parent()];
    if (v.is_tuple() || v.empty()) {
      return InvalidArgumentError("instruction %" + std::string(in->name()) +
                                  " is not an array for its elementwise user");
    }
    inputs.push_back(&v.array());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, RunElementwiseRegion(region, inputs));
  size_t o = 0;
  for (const ElementwiseRegion::Member& m : region.members) {
    if (m.is_output) values[m.instr->index_in_parent()] = Value::Own(std::move(outputs[o++]));
  }
  return Ok();
}

Result<Value> Interpreter::EvalElementwiseAlone(const Instruction& instr,
                                                std::span<const Value> operands) {
  ElementwiseRegion region;
  region.element_count = instr.shape().ElementCount();
  ElementwiseRegion::Member member;
  member.instr = &instr;
  member.is_output = true;
  KILN_ASSIGN_OR_RETURN(member.kernel, ResolveElementwiseKernel(instr));
  for (int64_t k = 0; k < instr.operand_count() && k < 3; ++k) {
    member.sources[k] = ElementwiseRegion::InputSource(static_cast<int>(k));
    region.inputs.push_back(instr.operand(k));
  }
  region.members.push_back(member);
  LayOutRegionScratch(region);
  KILN_ASSIGN_OR_RETURN(std::vector<const Literal*> inputs, ArrayOperands(instr, operands));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, RunElementwiseRegion(region, inputs));
  return Value::Own(std::move(outputs[0]));
}

Result<Value> Interpreter::EvalKernel(const Instruction& instr, std::span<const Value> operands) {
  KernelFn kernel = FindHeavyKernel(instr.opcode());
  if (kernel == nullptr) {
    return std::unexpected(UnsupportedOpError(instr, "unsupported op " + instr.OpcodeText()));
  }
  return EvalKernelFn(instr, operands, kernel);
}

Result<Value> Interpreter::EvalKernelFn(const Instruction& instr, std::span<const Value> operands,
                                        KernelFn kernel) {
  std::deque<Literal> materialized;  // tuple-valued operands, assembled
  std::vector<const Literal*> literals;
  for (const Value& v : operands) {
    if (v.is_tuple()) {
      materialized.push_back(v.ToLiteral());
      literals.push_back(&materialized.back());
    } else {
      literals.push_back(&v.array());
    }
  }
  KILN_ASSIGN_OR_RETURN(Literal result, kernel(instr, literals, *this));
  return ValueFromLiteral(std::move(result));
}

Result<Value> Interpreter::EvalInstruction(const Instruction& instr,
                                           std::span<const Value> operands) {
  if (ShapeOpFn fn = FindShapeOp(instr.opcode())) {
    KILN_ASSIGN_OR_RETURN(std::vector<const Literal*> literals, ArrayOperands(instr, operands));
    KILN_ASSIGN_OR_RETURN(Literal result, fn(instr, literals));
    return Value::Own(std::move(result));
  }
  if (IsElementwiseInstruction(instr)) return EvalElementwiseAlone(instr, operands);
  if (hlo::CategoryOf(instr.opcode()) == hlo::OpcodeCategory::kCollective) {
    return EvalCollective(instr, operands);
  }
  switch (instr.opcode()) {
    case Opcode::kSetDimensionSize:
      return EvalSetDimensionSize(instr, operands);
    case Opcode::kGetDimensionSize:
      return EvalGetDimensionSize(instr, operands);
    case Opcode::kDynamicReshape:
      return EvalDynamicReshape(instr, operands);
    case Opcode::kConstant:
      if (instr.literal() == nullptr || instr.literal()->elided()) {
        return std::unexpected(InstrError(instr, "constant has no value ({...})"));
      }
      return Value::Borrow(*instr.literal());
    case Opcode::kTuple:
      return Value::Tuple({operands.begin(), operands.end()});
    case Opcode::kGetTupleElement: {
      KILN_ASSIGN_OR_RETURN(int64_t index, hlo::GetTupleIndex(instr));
      if (operands.empty() || !operands[0].is_tuple() || index < 0 ||
          index >= static_cast<int64_t>(operands[0].elements().size())) {
        return std::unexpected(InstrError(instr, "tuple index " + std::to_string(index) +
                                                     " out of range"));
      }
      return operands[0].elements()[index];
    }
    case Opcode::kCopy:  // tuple-shaped copies; array copies are elementwise
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
      if (operands.empty()) return std::unexpected(InstrError(instr, "needs an operand"));
      if (instr.opcode() == Opcode::kOptimizationBarrier && operands.size() > 1) {
        return Value::Tuple({operands.begin(), operands.end()});
      }
      return operands[0];
    case Opcode::kAfterAll:
      return ZeroValue(hlo::Shape::Token());
    case Opcode::kPartitionId:
      return U32Scalar(instr.shape(), options_.slice ? static_cast<uint32_t>(options_.slice->device.partition) : 0);
    case Opcode::kReplicaId:
      return U32Scalar(instr.shape(), options_.slice ? static_cast<uint32_t>(options_.slice->device.replica) : 0);
    case Opcode::kRngGetAndUpdateState: {
      Literal state(instr.shape());
      for (int64_t i = 0; i < state.element_count() && state.data().size() >= 8; ++i) {
        state.Set<uint64_t>(i, NextRngSeed());
      }
      return Value::Own(std::move(state));
    }
    case Opcode::kWhile:
      if (operands.size() != 1) return std::unexpected(InstrError(instr, "while takes one operand"));
      return EvalWhile(instr, operands[0]);
    case Opcode::kConditional:
      return EvalConditional(instr, operands);
    case Opcode::kCall:
      return EvalCalled(instr, "to_apply", operands);
    case Opcode::kFusion:
      return EvalCalled(instr, "calls", operands);
    case Opcode::kMap:
      return EvalMap(instr, operands);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
      return EvalAsync(instr, operands);
    case Opcode::kCustomCall:
      return EvalCustomCall(instr, operands);
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
      return std::unexpected(
          UnsupportedOpError(instr, "unsupported op " + instr.OpcodeText() +
                                        ": a single simulated chip has no host or peer to exchange data with"));
    default:
      return EvalKernel(instr, operands);
  }
}

Result<hlo::Literal> Interpreter::Call(const hlo::Computation& computation,
                                       std::span<const hlo::Literal* const> args) {
  std::vector<Value> values;
  values.reserve(args.size());
  for (const Literal* arg : args) values.push_back(Value::Borrow(*arg));
  const Instruction* saved = current_;
  Result<Value> result = Run(computation, values);
  current_ = saved;
  if (!result) return std::unexpected(std::move(result.error()));
  return std::move(*result).TakeLiteral();
}

}  // namespace kiln::runtime
