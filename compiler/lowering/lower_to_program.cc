#include "compiler/lowering/lower_to_program.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "compiler/lowering/kernel_module_text.h"

namespace kiln::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using runtime::BufferKind;

// Constants up to this size are written into each kernel that reads them;
// larger ones are read from a buffer like any other input.
constexpr int64_t kInlineConstantBytes = 1024;

// Where an entry value lives: one buffer per array, tuples as lists.
struct ValueTree {
  int64_t buffer = -1;
  std::vector<ValueTree> elements;
  bool is_tuple = false;
};

void CollectBuffers(const ValueTree& v, std::vector<uint32_t>& out) {
  if (!v.is_tuple) {
    out.push_back(static_cast<uint32_t>(v.buffer));
    return;
  }
  for (const ValueTree& e : v.elements) CollectBuffers(e, out);
}

// How lowering treats an entry instruction that roots no plan kernel.
enum class Role {
  kKernelRoot,       // written by a plan kernel
  kInsideKernel,     // computed only inside plan kernels
  kParameter,        // a parameter buffer
  kInlineConstant,   // folded into each kernel that reads it
  kBufferConstant,   // a constant buffer
  kFoldedBitcast,    // folded into each kernel that reads it
  kTupleElement,     // get-tuple-element: selects part of a tuple value
  kTuple,            // tuple: a list of its operands' values
  kAlias,            // add-dependency, domain, opt-barrier: its operand's value
  kOwnKernel,        // needs a kernel lowering makes for it (after-all, ...)
};

class Lowerer {
 public:
  explicit Lowerer(const LoweringInput& in)
      : in_(in), entry_(*in.module->entry()), plan_(*in.plan) {}

  Result<runtime::Program> Run();

 private:
  const Instruction& At(int64_t i) const { return *entry_.instructions()[i]; }
  Role RoleOf(int64_t i) const;
  int64_t Offset(int64_t instruction) const {
    return instruction < static_cast<int64_t>(in_.value_offsets.size())
               ? std::max<int64_t>(in_.value_offsets[instruction], 0)
               : 0;
  }

  uint32_t AddBuffer(BufferKind kind, const hlo::Shape& shape, uint64_t offset);
  ValueTree NewBuffers(BufferKind kind, const hlo::Shape& shape, uint64_t& offset,
                       int32_t parameter = -1, std::vector<int64_t> path = {});
  // The buffers holding entry value i, lowering whatever it needs first.
  // Iterative: a chain of a million tuples or aliases must not recurse.
  Result<const ValueTree*> ValueOf(int64_t i);
  // The entry values Resolve(i) reads.
  std::vector<int64_t> InputsOf(int64_t i) const;
  // Gives entry value i its buffers once InputsOf(i) have theirs.
  Result<const ValueTree*> Resolve(int64_t i);
  // A kernel computing `instructions`: they and the bitcasts, small
  // constants and tuples they read (folded in), and the values read from
  // outside those.
  struct KernelExtent {
    std::set<int64_t> members;
    std::set<int64_t> outside;
  };
  KernelExtent ExtentOf(const std::vector<int64_t>& instructions) const;
  Status EmitKernel(std::vector<int64_t> instructions, const std::vector<int64_t>& roots,
                    std::string kind, const fusion::Kernel* planned);

  const LoweringInput& in_;
  const hlo::Computation& entry_;
  const fusion::FusionPlan& plan_;
  std::vector<bool> inside_kernel_;
  std::vector<std::optional<ValueTree>> values_;
  runtime::Program p_;
};

Role Lowerer::RoleOf(int64_t i) const {
  if (i < static_cast<int64_t>(plan_.root_kernel.size()) && plan_.root_kernel[i] >= 0) {
    return Role::kKernelRoot;
  }
  const Instruction& instr = At(i);
  switch (instr.opcode()) {
    case Opcode::kParameter:
      return Role::kParameter;
    case Opcode::kConstant: {
      const hlo::Literal* lit = instr.literal();
      if (instr.shape().IsTuple()) return Role::kInlineConstant;
      bool small = instr.shape().IsArray() && instr.shape().ByteSize() >= 0 &&
                   instr.shape().ByteSize() <= kInlineConstantBytes;
      return (lit == nullptr || lit->elided() || small) ? Role::kInlineConstant
                                                        : Role::kBufferConstant;
    }
    case Opcode::kBitcast:
      return Role::kFoldedBitcast;
    case Opcode::kGetTupleElement:
      return Role::kTupleElement;
    case Opcode::kTuple:
      return Role::kTuple;
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return Role::kAlias;
    default:
      return inside_kernel_[i] ? Role::kInsideKernel : Role::kOwnKernel;
  }
}

uint32_t Lowerer::AddBuffer(BufferKind kind, const hlo::Shape& shape, uint64_t offset) {
  runtime::ProgramBuffer b;
  b.kind = kind;
  b.shape = shape.ToString(true);
  b.size_bytes = shape.IsArray() ? static_cast<uint64_t>(std::max<int64_t>(shape.ByteSize(), 0)) : 0;
  b.offset = offset;
  p_.buffers.push_back(std::move(b));
  return static_cast<uint32_t>(p_.buffers.size() - 1);
}

ValueTree Lowerer::NewBuffers(BufferKind kind, const hlo::Shape& shape, uint64_t& offset,
                              int32_t parameter, std::vector<int64_t> path) {
  ValueTree v;
  if (!shape.IsTuple()) {
    v.buffer = AddBuffer(kind, shape, offset);
    offset += p_.buffers.back().size_bytes;
    if (parameter >= 0) {
      p_.buffers.back().parameter_number = parameter;
      p_.buffers.back().parameter_path = path;
      p_.parameters.push_back(static_cast<uint32_t>(v.buffer));
    }
    return v;
  }
  v.is_tuple = true;
  for (size_t e = 0; e < shape.tuple_shapes().size(); ++e) {
    path.push_back(static_cast<int64_t>(e));
    v.elements.push_back(NewBuffers(kind, shape.tuple_shapes(e), offset, parameter, path));
    path.pop_back();
  }
  return v;
}

Result<const ValueTree*> Lowerer::ValueOf(int64_t i) {
  if (values_[i]) return &*values_[i];
  std::vector<int64_t> stack = {i};
  while (!stack.empty()) {
    const int64_t j = stack.back();
    if (values_[j]) {
      stack.pop_back();
      continue;
    }
    const std::vector<int64_t> inputs = InputsOf(j);
    bool ready = true;
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {  // first input first
      if (!values_[*it]) {
        stack.push_back(*it);
        ready = false;
      }
    }
    if (!ready) continue;
    stack.pop_back();
    KILN_RETURN_IF_ERROR(Resolve(j));
  }
  return &*values_[i];
}

std::vector<int64_t> Lowerer::InputsOf(int64_t i) const {
  const Instruction& instr = At(i);
  std::vector<int64_t> inputs;
  switch (RoleOf(i)) {
    case Role::kTupleElement:
    case Role::kAlias:
      inputs.push_back(instr.operand(0)->index_in_parent());
      break;
    case Role::kTuple:
      for (const Instruction* operand : instr.operands()) inputs.push_back(operand->index_in_parent());
      break;
    case Role::kInlineConstant:
    case Role::kFoldedBitcast:
    case Role::kOwnKernel: {
      const KernelExtent extent = ExtentOf({i});
      inputs.assign(extent.outside.begin(), extent.outside.end());
      break;
    }
    default:
      break;
  }
  return inputs;
}

// Inputs already have values here, so ValueOf on them returns at once.
Result<const ValueTree*> Lowerer::Resolve(int64_t i) {
  const Instruction& instr = At(i);
  switch (RoleOf(i)) {
    case Role::kKernelRoot:
    case Role::kParameter:
      return InternalError("lowering: %" + std::string(instr.name()) +
                           " is read before the kernel writing it");
    case Role::kInsideKernel:
      return InternalError("lowering: %" + std::string(instr.name()) +
                           " is read outside the kernels that compute it, but no kernel writes it");
    case Role::kBufferConstant: {
      uint64_t offset = Offset(i);
      ValueTree v = NewBuffers(BufferKind::kConstant, instr.shape(), offset);
      p_.buffers[v.buffer].literal = instr.literal()->ToString();
      values_[i] = std::move(v);
      return &*values_[i];
    }
    case Role::kTupleElement: {
      KILN_ASSIGN_OR_RETURN(const ValueTree* tuple, ValueOf(instr.operand(0)->index_in_parent()));
      KILN_ASSIGN_OR_RETURN(int64_t index, hlo::GetTupleIndex(instr));
      if (!tuple->is_tuple || index < 0 || index >= static_cast<int64_t>(tuple->elements.size())) {
        return InternalError("lowering: %" + std::string(instr.name()) + " selects a missing tuple element");
      }
      values_[i] = tuple->elements[index];
      return &*values_[i];
    }
    case Role::kTuple: {
      ValueTree v;
      v.is_tuple = true;
      for (const Instruction* operand : instr.operands()) {
        KILN_ASSIGN_OR_RETURN(const ValueTree* e, ValueOf(operand->index_in_parent()));
        v.elements.push_back(*e);
      }
      values_[i] = std::move(v);
      return &*values_[i];
    }
    case Role::kAlias: {
      KILN_ASSIGN_OR_RETURN(const ValueTree* v, ValueOf(instr.operand(0)->index_in_parent()));
      values_[i] = *v;
      return &*values_[i];
    }
    case Role::kInlineConstant:
    case Role::kFoldedBitcast:
    case Role::kOwnKernel:
      // Needed as a buffer (a result, a tuple element): give it a kernel.
      KILN_RETURN_IF_ERROR(EmitKernel({i}, {i}, "single", nullptr));
      return &*values_[i];
  }
  return InternalError("lowering: unreachable");
}

Lowerer::KernelExtent Lowerer::ExtentOf(const std::vector<int64_t>& instructions) const {
  // Fold the bitcasts, small constants and tuples the kernel reads into it.
  KernelExtent extent;
  std::set<int64_t>& members = extent.members;
  members.insert(instructions.begin(), instructions.end());
  std::vector<int64_t> work(instructions.begin(), instructions.end());
  while (!work.empty()) {
    int64_t i = work.back();
    work.pop_back();
    for (const Instruction* operand : At(i).operands()) {
      int64_t o = operand->index_in_parent();
      if (members.contains(o)) continue;
      // Tuples are rebuilt inside the kernel so that the constants in them
      // (a while loop's initial counter) stay visible to static analysis.
      Role role = RoleOf(o);
      if (role == Role::kFoldedBitcast || role == Role::kInlineConstant || role == Role::kTuple) {
        members.insert(o);
        work.push_back(o);
      }
    }
  }
  for (int64_t i : members) {
    for (const Instruction* operand : At(i).operands()) {
      if (!members.contains(operand->index_in_parent())) {
        extent.outside.insert(operand->index_in_parent());
      }
    }
  }
  return extent;
}

Status Lowerer::EmitKernel(std::vector<int64_t> instructions, const std::vector<int64_t>& roots,
                           std::string kind, const fusion::Kernel* planned) {
  const KernelExtent extent = ExtentOf(instructions);
  const std::set<int64_t>& members = extent.members;
  const std::set<int64_t>& outside = extent.outside;
  runtime::ProgramKernel kernel;
  std::vector<KernelInput> inputs;
  for (int64_t o : outside) {
    KILN_ASSIGN_OR_RETURN(const ValueTree* v, ValueOf(o));
    CollectBuffers(*v, kernel.inputs);
    inputs.push_back({&At(o)});
  }
  std::vector<const Instruction*> body;
  for (int64_t i : members) body.push_back(&At(i));
  std::vector<const Instruction*> root_instrs;
  for (int64_t r : roots) {
    uint64_t offset = Offset(r);
    values_[r] = NewBuffers(BufferKind::kTemp, At(r).shape(), offset);
    CollectBuffers(*values_[r], kernel.outputs);
    root_instrs.push_back(&At(r));
  }
  kernel.name = At(roots.front()).name();
  kernel.kind = std::move(kind);
  kernel.hlo = KernelModuleText(body, inputs, root_instrs);
  kernel.fused_instructions = static_cast<uint32_t>(body.size());
  if (planned != nullptr) {
    const fusion::TileChoice& t = planned->tile;
    for (const fusion::BlockShape& b : t.inputs) kernel.tiling.operand_blocks.push_back(b.dimensions);
    for (const fusion::BlockShape& b : t.outputs) kernel.tiling.result_blocks.push_back(b.dimensions);
    kernel.tiling.grid = t.grid;
    kernel.tiling.vmem_bytes = static_cast<uint64_t>(std::max<int64_t>(t.vmem_bytes, 0));
    if (planned->id < static_cast<int64_t>(in_.estimates.size())) {
      const KernelEstimate& e = in_.estimates[planned->id];
      kernel.flops = e.flops;
      kernel.bytes_accessed = e.bytes;
      kernel.estimated_seconds = e.seconds;
    }
  }
  p_.kernels.push_back(std::move(kernel));
  return Ok();
}

Result<runtime::Program> Lowerer::Run() {
  const int64_t n = entry_.instruction_count();
  values_.assign(n, std::nullopt);
  inside_kernel_.assign(n, false);
  for (const fusion::Kernel& k : plan_.kernels) {
    for (int64_t i : k.instructions) {
      if (i < 0 || i >= n)
        return InternalError("lowering: plan names instruction " + std::to_string(i) + " of " + std::to_string(n));
      inside_kernel_[i] = true;
    }
  }
  p_.key = in_.key;
  p_.chip = in_.chip;
  p_.plan = std::string(fusion::PlanKindName(plan_.kind));
  p_.options = in_.options_json;
  for (const Instruction* param : entry_.parameters()) {
    if (param == nullptr) return InternalError("lowering: the entry has a missing parameter number");
    uint64_t offset = Offset(param->index_in_parent());
    values_[param->index_in_parent()] =
        NewBuffers(BufferKind::kParameter, param->shape(), offset,
                   static_cast<int32_t>(param->parameter_number()));
  }
  for (const fusion::Kernel& k : plan_.kernels) {
    KILN_RETURN_IF_ERROR(EmitKernel(k.instructions, k.roots,
                                    std::string(fusion::KernelKindName(k.kind)), &k));
  }
  KILN_ASSIGN_OR_RETURN(const ValueTree* result, ValueOf(entry_.root()->index_in_parent()));
  CollectBuffers(*result, p_.results);
  for (uint32_t b : p_.results) {
    if (p_.buffers[b].kind == BufferKind::kTemp) p_.buffers[b].kind = BufferKind::kOutput;
  }
  p_.result_shape = entry_.root()->shape().ToString(true);
  p_.peak_hbm_bytes = in_.peak_hbm_bytes;
  p_.compile_ms = in_.compile_ms;
  for (const runtime::ProgramKernel& k : p_.kernels) p_.estimated_seconds += k.estimated_seconds;
  KILN_RETURN_IF_ERROR(runtime::VerifyProgram(p_));
  return std::move(p_);
}

}  // namespace

Result<runtime::Program> LowerToProgram(const LoweringInput& input) {
  if (input.module == nullptr || input.module->entry() == nullptr || input.plan == nullptr) {
    return InternalError("lowering: no module or plan");
  }
  return Lowerer(input).Run();
}

}  // namespace kiln::lowering
