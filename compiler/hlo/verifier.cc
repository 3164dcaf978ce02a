#include "compiler/hlo/verifier.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/name_table.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/hlo/verifier_opcode_rules.h"

namespace kiln::hlo {
namespace {

using verifier_internal::AllowsMixedOperands;
using verifier_internal::FixedArity;
using verifier_internal::IsPassThrough;
using verifier_internal::MinArity;

// The instruction, named with its computation, at its source line if known.
SourceLocation PlaceOf(const Instruction& instr) {
  return {.line = instr.source_line(),
          .subject = "instruction %" + std::string(instr.name()) + " in computation %" +
                     (instr.parent() != nullptr ? instr.parent()->name() : std::string("?"))};
}

// `message` about `instr`, placed at it. An attribute decoder's error
// names the instruction as its place: pass its message, the place is
// replaced by this one.
Error InstrError(const Instruction& instr, std::string message) {
  return InvalidArgumentError(std::move(message)).At(PlaceOf(instr));
}

Error CompError(const Computation& comp, std::string message) {
  return InvalidArgumentError(std::move(message)).At({.subject = "computation %" + comp.name()});
}

bool IsCollective(Opcode op) { return CategoryOf(op) == OpcodeCategory::kCollective; }

void CollectFloatTypes(const Shape& s, std::vector<PrimitiveType>* out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) CollectFloatTypes(e, out);
  } else if (IsFloatingPoint(s.element_type())) {
    out->push_back(s.element_type());
  }
}

Status ValidateShape(const Shape& s) {
  if (s.IsTuple() || s.IsBuffer()) {
    for (const Shape& e : s.tuple_shapes()) KILN_RETURN_IF_ERROR(ValidateShape(e));
    return Ok();
  }
  if (s.element_type() == PrimitiveType::kInvalid) return InvalidArgumentError("shape has no element type");
  if (!s.IsArray()) return Ok();
  if (s.rank() > kMaxRank) return InvalidArgumentError("shape " + s.ToString() + " has rank above 64");
  for (int64_t d : s.dimensions()) {
    if (d < 0 && d != kUnboundedDim) return InvalidArgumentError("shape " + s.ToString() + " has a negative dimension");
  }
  const auto& m2m = s.layout().minor_to_major;
  if (!m2m.empty() || s.rank() == 0) {
    std::vector<bool> seen(s.rank(), false);
    bool ok = static_cast<int64_t>(m2m.size()) == s.rank();
    for (int64_t d : m2m) {
      if (!ok || d < 0 || d >= s.rank() || seen[d]) {
        ok = false;
        break;
      }
      seen[d] = true;
    }
    if (!ok) return InvalidArgumentError("layout of " + s.ToString(true) + " is not a permutation of its dimensions");
  }
  return Ok();
}

// ---- Structure ------------------------------------------------------------

// Fails if an instruction of `comp` depends on itself through operands and
// control predecessors. `position` maps each instruction, operand and
// control predecessor (all checked members) to its place in the list. A
// list in which everything comes after what it depends on is acyclic (the
// parser resolves names only backwards, so parsed modules always pass here);
// lists rearranged through the IR API go through Kahn's algorithm.
Status VerifyAcyclic(const Computation& comp, const std::unordered_map<const Instruction*, size_t>& position) {
  const auto& instructions = comp.instructions();
  auto each_dependency = [&](size_t i, auto&& visit) {
    for (const Instruction* op : instructions[i]->operands()) visit(position.at(op));
    for (const Instruction* pred : instructions[i]->control_predecessors()) visit(position.at(pred));
  };
  bool ordered = true;
  for (size_t i = 0; i < instructions.size() && ordered; ++i) {
    each_dependency(i, [&](size_t d) { ordered &= d < i; });
  }
  if (ordered) return Ok();

  // Users as one flat list per instruction (offsets into `users`).
  std::vector<int64_t> pending(instructions.size(), 0);
  std::vector<size_t> first_user(instructions.size() + 1, 0);
  for (size_t i = 0; i < instructions.size(); ++i) {
    each_dependency(i, [&](size_t d) {
      ++pending[i];
      ++first_user[d + 1];
    });
  }
  for (size_t i = 0; i < instructions.size(); ++i) first_user[i + 1] += first_user[i];
  std::vector<size_t> users(first_user.back());
  std::vector<size_t> filled(first_user.begin(), first_user.end() - 1);
  for (size_t i = 0; i < instructions.size(); ++i) {
    each_dependency(i, [&](size_t d) { users[filled[d]++] = i; });
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < instructions.size(); ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (size_t u = first_user[i]; u < first_user[i + 1]; ++u) {
      if (--pending[users[u]] == 0) ready.push_back(users[u]);
    }
  }
  if (done == instructions.size()) return Ok();
  for (size_t i = 0; i < instructions.size(); ++i) {
    if (pending[i] > 0) {
      return InstrError(*instructions[i], "is part of a cycle through its operands or control predecessors");
    }
  }
  return Ok();
}

// Checks one computation's structure. `module_computations` is null for a
// computation without a module.
Status VerifyStructure(const Computation& comp,
                       const std::unordered_set<const Computation*>* module_computations) {
  if (comp.instructions().empty()) return CompError(comp, "has no instructions");
  // Each instruction's place in the computation's list (which makes it a member).
  std::unordered_map<const Instruction*, size_t> position;
  position.reserve(comp.instructions().size());
  NameTable<const Instruction> names;
  for (const auto& owned : comp.instructions()) {
    if (owned == nullptr) return CompError(comp, "holds a null instruction");
    if (owned->parent() != &comp) return InstrError(*owned, "has a different parent computation");
    position.emplace(owned.get(), position.size());
    if (!names.Insert(owned->name(), owned.get())) {
      return InstrError(*owned, "reuses a name already defined in the computation");
    }
  }
  if (comp.root() == nullptr) return CompError(comp, "has no root instruction");
  if (!position.contains(comp.root())) {
    return CompError(comp, "root %" + std::string(comp.root()->name()) + " is not an instruction of it");
  }
  int64_t parameter_instructions = 0;
  for (const auto& owned : comp.instructions()) {
    const Instruction& instr = *owned;
    if (Status valid = ValidateShape(instr.shape()); !valid) {
      return InstrError(instr, valid.error().message);
    }
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      const Instruction* op = instr.operand(i);
      if (op == nullptr) return InstrError(instr, "operand " + std::to_string(i) + " is null");
      if (!position.contains(op)) {
        return InstrError(instr, "operand " + std::to_string(i) + " %" + std::string(op->name()) +
                                     " is not in the same computation");
      }
    }
    for (const Instruction* pred : instr.control_predecessors()) {
      if (pred == nullptr || !position.contains(pred)) {
        return InstrError(instr, "control predecessor is not in the same computation");
      }
    }
    for (const Attribute& a : instr.attributes()) {
      if (a.kind != Attribute::Kind::kComputations) continue;
      for (const Computation* callee : a.computations) {
        if (callee == nullptr)
          return InstrError(instr, std::string(a.name) + " refers to a null computation");
        if (module_computations != nullptr && !module_computations->contains(callee)) {
          return InstrError(instr, std::string(a.name) + " refers to computation %" + callee->name() +
                                       " which is not in the module");
        }
      }
    }
    const int arity = FixedArity(instr.opcode());
    const bool sparse_dot = instr.opcode() == Opcode::kDot && instr.FindAttribute("sparsity");
    if (arity >= 0 && !sparse_dot && instr.operand_count() != arity) {
      return InstrError(instr, std::string(OpcodeName(instr.opcode())) + " expects " +
                                   std::to_string(arity) + " operand(s), has " +
                                   std::to_string(instr.operand_count()));
    }
    if (instr.operand_count() < MinArity(instr.opcode())) {
      return InstrError(instr, std::string(OpcodeName(instr.opcode())) + " expects at least " +
                                   std::to_string(MinArity(instr.opcode())) + " operand(s)");
    }
    if (instr.opcode() == Opcode::kParameter) {
      ++parameter_instructions;
      const int64_t n = instr.parameter_number();
      if (n < 0) return InstrError(instr, "has a negative parameter number");
      const auto& slots = comp.parameters();
      if (n >= static_cast<int64_t>(slots.size()) || slots[n] != &instr) {
        if (n < static_cast<int64_t>(slots.size()) && slots[n] != nullptr) {
          return InstrError(instr, "parameter number " + std::to_string(n) + " is already used by %" +
                                       std::string(slots[n]->name()));
        }
        return InstrError(instr, "parameter number " + std::to_string(n) + " is too large");
      }
    }
  }
  for (size_t i = 0; i < comp.parameters().size(); ++i) {
    if (comp.parameters()[i] == nullptr) {
      return CompError(comp, "parameter number " + std::to_string(i) +
                                 " is missing (parameters must be numbered 0.." +
                                 std::to_string(parameter_instructions - 1) + ")");
    }
  }
  return VerifyAcyclic(comp, position);
}

// Fails if a computation calls itself, directly or through others, or if
// calls nest deeper than kMaxCallNesting (call_nesting.h). Levels are found
// leaves first (Kahn's algorithm), without recursion.
Status VerifyCallGraph(const Module& module) {
  struct Node {
    int64_t pending_callees = 0;
    std::vector<const Computation*> callers;
    int level = 1;
    const Computation* bottom = nullptr;  // of its deepest call chain
  };
  std::unordered_map<const Computation*, Node> nodes;
  for (const auto& comp : module.computations()) nodes[comp.get()].bottom = comp.get();
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        ++nodes[comp.get()].pending_callees;
        nodes[callee].callers.push_back(comp.get());
      }
    }
  }
  std::vector<const Computation*> ready;  // in module order, so errors are deterministic
  for (const auto& comp : module.computations()) {
    if (nodes[comp.get()].pending_callees == 0) ready.push_back(comp.get());
  }
  size_t done = 0;
  while (!ready.empty()) {
    const Computation* comp = ready.back();
    ready.pop_back();
    ++done;
    const Node& node = nodes[comp];
    if (node.level > kMaxCallNesting) {
      return CompError(*comp, "calls nest " + std::to_string(node.level) +
                                  " computations deep (down to %" + node.bottom->name() +
                                  "); calls may nest at most " + std::to_string(kMaxCallNesting) +
                                  " computations deep");
    }
    for (const Computation* caller : node.callers) {
      Node& up = nodes[caller];
      if (node.level + 1 > up.level) {
        up.level = node.level + 1;
        up.bottom = node.bottom;
      }
      if (--up.pending_callees == 0) ready.push_back(caller);
    }
  }
  if (done == nodes.size()) return Ok();
  for (const auto& comp : module.computations()) {
    if (nodes[comp.get()].pending_callees > 0) {
      return CompError(*comp, "calls itself (directly or indirectly)");
    }
  }
  return Ok();
}

// ---- Shapes -------------------------------------------------------------------

class ShapeChecker {
 public:
  ShapeChecker(const Instruction& instr, const VerifierOptions& options)
      : instr_(instr), options_(options) {}

  Status Run() const {
    Status s = Check();
    if (!s) return InstrError(instr_, s.error().message);
    return Ok();
  }

 private:
  const Shape& Op(int64_t i) const { return instr_.operand(i)->shape(); }

  Status Check() const {
    KILN_RETURN_IF_ERROR(CheckMixedPrecision());
    KILN_RETURN_IF_ERROR(CheckAttributes());
    const Shape& declared = instr_.shape();
    KILN_ASSIGN_OR_RETURN(Shape inferred, InferInstructionShape(instr_, &declared));
    const bool ignore_fp = options_.allow_mixed_precision && !IsPassThrough(instr_.opcode());
    if (!ShapesCompatible(declared, inferred, ignore_fp)) {
      return InvalidArgumentError("result shape " + declared.ToString() + " does not match the expected " +
                                  inferred.ToString());
    }
    if (!SameBounds(declared, inferred)) {
      // A dynamic dimension stands for any size up to its bound, but the
      // bound sizes the buffer: it must be the one the operands give.
      return InvalidArgumentError("result shape " + declared.ToString() + " has other dimension bounds than the expected " +
                                  inferred.ToString());
    }
    return Ok();
  }

  // Equal extents (a dynamic dimension's bound included), except where either
  // side is unbounded (`?`).
  static bool SameBounds(const Shape& a, const Shape& b) {
    if (a.IsTuple() || b.IsTuple()) {
      if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
      for (size_t i = 0; i < a.tuple_shapes().size(); ++i) {
        if (!SameBounds(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
      }
      return true;
    }
    if (!a.IsArray() || !b.IsArray() || a.rank() != b.rank()) return true;
    for (int64_t i = 0; i < a.rank(); ++i) {
      const int64_t x = a.dimensions(i), y = b.dimensions(i);
      if (x != y && x != kUnboundedDim && y != kUnboundedDim) return false;
    }
    return true;
  }

  Status CheckMixedPrecision() const {
    if (options_.allow_mixed_precision || AllowsMixedOperands(instr_.opcode())) return Ok();
    std::vector<PrimitiveType> types;
    for (const Instruction* op : instr_.operands()) CollectFloatTypes(op->shape(), &types);
    for (PrimitiveType t : types) {
      if (t != types[0]) {
        return InvalidArgumentError("mixes floating-point precisions " + std::string(PrimitiveTypeName(types[0])) +
                                    " and " + std::string(PrimitiveTypeName(t)) + " among its operands");
      }
    }
    return Ok();
  }

  // Opcode-specific checks beyond the result shape.
  Status CheckAttributes() const {
    const Opcode op = instr_.opcode();
    if (instr_.FindAttribute("operand_precision") != nullptr) {
      KILN_RETURN_IF_ERROR(GetOperandPrecision(instr_));
    }
    switch (op) {
      case Opcode::kCompare: {
        KILN_ASSIGN_OR_RETURN(Comparison c, GetComparison(instr_));
        const PrimitiveType t = Op(0).element_type();
        if (!c.type_explicit) return Ok();
        const bool ok = IsFloatingPoint(t) ? (c.type == ComparisonType::kFloat ||
                                              c.type == ComparisonType::kTotalOrder)
                                           : c.type == DefaultComparisonType(t);
        if (!ok) {
          return InvalidArgumentError("comparison type " + std::string(ComparisonTypeName(c.type)) +
                                      " does not fit operands of type " + std::string(PrimitiveTypeName(t)));
        }
        return Ok();
      }
      case Opcode::kMap: {
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                              GetIntListAttributeOr(instr_, "dimensions"));
        for (size_t i = 0; i < dims.size(); ++i) {
          if (dims[i] != static_cast<int64_t>(i) ||
              static_cast<int64_t>(dims.size()) != Op(0).rank()) {
            return InvalidArgumentError("map dimensions must be {0,...,rank-1}");
          }
        }
        return Ok();
      }
      case Opcode::kFusion:
        KILN_RETURN_IF_ERROR(GetFusionKind(instr_));
        return Ok();
      case Opcode::kCustomCall:
        KILN_RETURN_IF_ERROR(GetStringAttribute(instr_, "custom_call_target"));
        return Ok();
      case Opcode::kRng: {
        KILN_RETURN_IF_ERROR(GetRngDistribution(instr_));
        for (int64_t i = 0; i < 2; ++i) {
          if (!Op(i).IsArray() || Op(i).rank() != 0 ||
              Op(i).element_type() != instr_.shape().element_type()) {
            return InvalidArgumentError("rng parameters must be scalars of the result type, got " + Op(i).ToString());
          }
        }
        return Ok();
      }
      case Opcode::kRngBitGenerator: {
        KILN_RETURN_IF_ERROR(GetRngAlgorithm(instr_));
        const Shape& result = instr_.shape();
        if (!result.IsTuple()) return Ok();
        if (result.tuple_shapes().size() != 2 || !ShapesCompatible(result.tuple_shapes(0), Op(0))) {
          return InvalidArgumentError(
              "rng-bit-generator result must be a (state, bits) tuple whose state "
              "matches operand " +
              Op(0).ToString());
        }
        return Ok();
      }
      default:
        break;
    }
    if (IsCollective(op)) {
      // The attributes that describe the participants must decode.
      KILN_RETURN_IF_ERROR(GetReplicaGroups(instr_));
      KILN_RETURN_IF_ERROR(GetSourceTargetPairs(instr_));
    }
    return Ok();
  }

  const Instruction& instr_;
  const VerifierOptions& options_;
};

Status VerifyShapes(const Computation& comp, const VerifierOptions& options) {
  for (const auto& instr : comp.instructions()) {
    KILN_RETURN_IF_ERROR(ShapeChecker(*instr, options).Run());
  }
  return Ok();
}

Status VerifyEntryLayout(const Module& module) {
  const Computation& entry = *module.entry();
  const ComputationLayout& layout = *module.entry_layout();
  if (layout.parameters.size() != entry.parameters().size()) {
    return InvalidArgumentError("entry_computation_layout has " + std::to_string(layout.parameters.size()) +
                                " parameters but entry computation %" + entry.name() + " has " +
                                std::to_string(entry.parameters().size()));
  }
  for (size_t i = 0; i < layout.parameters.size(); ++i) {
    const Shape& actual = entry.parameters()[i]->shape();
    if (!ShapesCompatible(actual, layout.parameters[i])) {
      return InvalidArgumentError("entry_computation_layout parameter " + std::to_string(i) + " " +
                                  layout.parameters[i].ToString() + " does not match parameter %" +
                                  std::string(entry.parameters()[i]->name()) + " of shape " +
                                  actual.ToString());
    }
  }
  if (!ShapesCompatible(entry.root()->shape(), layout.result)) {
    return InvalidArgumentError("entry_computation_layout result " + layout.result.ToString() +
                                " does not match the root %" + std::string(entry.root()->name()) +
                                " of shape " + entry.root()->shape().ToString());
  }
  return Ok();
}

}  // namespace

Status VerifyComputation(const Computation& computation, const VerifierOptions& options) {
  std::unordered_set<const Computation*> members;
  const Module* module = computation.parent();
  if (module != nullptr) {
    for (const auto& c : module->computations()) members.insert(c.get());
  }
  KILN_RETURN_IF_ERROR(VerifyStructure(computation, module != nullptr ? &members : nullptr));
  return VerifyShapes(computation, options);
}

Status VerifyModule(const Module& module, const VerifierOptions& options) {
  std::unordered_set<const Computation*> members;
  std::unordered_set<std::string_view> names;
  for (const auto& c : module.computations()) {
    if (c == nullptr) return InvalidArgumentError("module " + module.name() + " holds a null computation");
    if (c->parent() != &module) return CompError(*c, "has a different parent module");
    if (!names.insert(c->name()).second) return CompError(*c, "name is used twice in the module");
    members.insert(c.get());
  }
  if (module.entry() == nullptr) return InvalidArgumentError("module " + module.name() + " has no entry computation");
  if (!members.contains(module.entry())) {
    return InvalidArgumentError("entry computation %" + module.entry()->name() + " is not in the module");
  }
  for (const auto& c : module.computations()) KILN_RETURN_IF_ERROR(VerifyStructure(*c, &members));
  KILN_RETURN_IF_ERROR(VerifyCallGraph(module));
  for (const auto& c : module.computations()) KILN_RETURN_IF_ERROR(VerifyShapes(*c, options));
  if (module.entry_layout()) KILN_RETURN_IF_ERROR(VerifyEntryLayout(module));
  return Ok();
}

}  // namespace kiln::hlo
