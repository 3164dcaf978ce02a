#include "compiler/stablehlo/shape_refinement.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/stablehlo/dynamic_ops.h"
#include "compiler/stablehlo/dynamic_rewrites.h"
#include "compiler/stablehlo/hlo_emitter.h"
#include "compiler/stablehlo/shape_folding.h"

namespace kiln::stablehlo {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

bool HasDynamicDimension(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (HasDynamicDimension(s)) return true;
    }
    return false;
  }
  return shape.IsArray() && !shape.is_static();
}

bool IsDynamicShapeCall(const Instruction& instr) {
  if (instr.opcode() != Opcode::kCustomCall) return false;
  Result<std::string> target = hlo::GetStringAttribute(instr, "custom_call_target");
  return target && IsDynamicShapeTarget(*target);
}

// The first dimension of `shape` that is dynamic, as "dimension 0 of
// f32[?,4]"; empty when none.
std::string DescribeDynamic(const Shape& shape) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      std::string inner = DescribeDynamic(shape.tuple_shapes()[i]);
      if (!inner.empty()) return inner + " (tuple element " + std::to_string(i) + ")";
    }
    return "";
  }
  if (!shape.IsArray()) return "";
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.is_dynamic_dimension(d)) return "dimension " + std::to_string(d) + " of " + shape.ToString();
  }
  return "";
}

// `refined` keeps every static size and the element type of `declared`.
Status CheckRefinement(const Shape& declared, const Shape& refined, const std::string& what) {
  auto mismatch = [&] {
    return InvalidArgumentError(what + " is " + refined.ToString() + ", which contradicts its declared " +
                                declared.ToString());
  };
  if (declared.IsTuple() != refined.IsTuple()) return mismatch();
  if (declared.IsTuple()) {
    if (declared.tuple_shapes().size() != refined.tuple_shapes().size()) return mismatch();
    for (size_t i = 0; i < declared.tuple_shapes().size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckRefinement(declared.tuple_shapes()[i], refined.tuple_shapes()[i], what));
    }
    return Ok();
  }
  if (!declared.IsArray()) return Ok();
  if (declared.element_type() != refined.element_type() || declared.rank() != refined.rank()) return mismatch();
  for (int64_t d = 0; d < declared.rank(); ++d) {
    if (declared.is_dynamic_dimension(d)) {
      // A bounded dimension keeps its bound.
      if (declared.dimensions(d) != hlo::kUnboundedDim && refined.dimensions(d) > declared.dimensions(d)) {
        return mismatch();
      }
      continue;
    }
    if (refined.is_dynamic_dimension(d) || declared.dimensions(d) != refined.dimensions(d)) return mismatch();
  }
  return Ok();
}

// The largest N of names "base.N" in the module, so that new names do not
// collide.
int64_t LargestNameSuffix(const hlo::Module& module) {
  int64_t largest = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      std::string_view name = instr->name();
      const size_t dot = name.rfind('.');
      if (dot == std::string_view::npos) continue;
      int64_t n = 0;
      auto [p, ec] = std::from_chars(name.data() + dot + 1, name.data() + name.size(), n);
      if (ec == std::errc() && p == name.data() + name.size()) largest = std::max(largest, n);
    }
  }
  return largest;
}

class Refiner {
 public:
  explicit Refiner(hlo::Module& module) : module_(module), names_(LargestNameSuffix(module)) {}

  Status Run(const RefineOptions& options) {
    Computation* entry = module_.entry();
    if (entry == nullptr) return InvalidArgumentError("the module has no entry computation");
    std::vector<Shape> shapes;
    std::vector<std::optional<IntTensor>> values;
    for (const Instruction* p : entry->parameters()) {
      const size_t n = static_cast<size_t>(p->parameter_number());
      shapes.push_back(n < options.parameter_shapes.size() ? options.parameter_shapes[n] : p->shape());
      std::optional<IntTensor> value;
      if (n < options.parameter_values.size() && options.parameter_values[n].has_value()) {
        const Shape& s = shapes.back();
        if (!s.IsArray() || s.rank() != 0 || !hlo::IsInteger(s.element_type())) {
          return InvalidArgumentError("parameter " + std::to_string(n) + " (" + std::string(p->name()) +
                                      ") is given a value but is not an integer scalar");
        }
        value = IntTensor{s.element_type(), {}, {*options.parameter_values[n]}};
      }
      values.push_back(std::move(value));
    }
    if (options.parameter_shapes.size() > entry->parameters().size()) {
      return InvalidArgumentError(std::to_string(options.parameter_shapes.size()) + " argument shapes for " +
                                  std::to_string(entry->parameters().size()) + " parameters");
    }
    std::optional<IntTensor> root_value;
    return RefineComputation(*entry, shapes, values, root_value);
  }

 private:
  // Refines `comp` for parameters of `shapes` (in parameter order) and
  // known `values`; `root_value` gets the root's value when it folds.
  Status RefineComputation(Computation& comp, const std::vector<Shape>& shapes,
                           const std::vector<std::optional<IntTensor>>& values,
                           std::optional<IntTensor>& root_value) {
    if (auto it = signatures_.find(&comp); it != signatures_.end()) {
      if (it->second != shapes) {
        return InvalidArgumentError("computation %" + comp.name() +
                                    " is called with different shapes; refinement gives it one");
      }
      root_value.reset();
      return Ok();
    }
    if (!active_.insert(&comp).second) {
      return InvalidArgumentError("computation %" + comp.name() + " calls itself");
    }
    signatures_[&comp] = shapes;
    const std::vector<Instruction*> params = comp.parameters();
    if (params.size() != shapes.size()) {
      return InvalidArgumentError("computation %" + comp.name() + " takes " + std::to_string(params.size()) +
                                  " parameters, given " + std::to_string(shapes.size()));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      KILN_RETURN_IF_ERROR(CheckRefinement(params[i]->shape(), shapes[i],
                                           "parameter " + std::to_string(i) + " (" + std::string(params[i]->name()) +
                                               ") of %" + comp.name()));
      params[i]->set_shape(shapes[i]);
      if (i < values.size() && values[i]) values_[params[i]] = *values[i];
    }
    HloEmitter emit(&module_, &comp, &names_);
    std::vector<Instruction*> dead;
    std::vector<Instruction*> order;
    for (const auto& instr : comp.instructions()) order.push_back(instr.get());
    for (Instruction* instr : order) {
      if (instr->opcode() == Opcode::kParameter) continue;
      Status refined = RefineInstruction(emit, *instr, dead);
      if (!refined) return refined.error().WithContext("refining %" + std::string(instr->name()));
    }
    if (comp.root() != nullptr) {
      auto it = values_.find(comp.root());
      if (it != values_.end()) root_value = it->second;
    }
    KILN_RETURN_IF_ERROR(comp.RemoveInstructions(dead));
    KILN_RETURN_IF_ERROR(Reorder(comp));
    active_.erase(&comp);
    return Ok();
  }

  std::vector<const IntTensor*> OperandValues(const Instruction& instr) const {
    std::vector<const IntTensor*> out;
    for (const Instruction* o : instr.operands()) {
      auto it = values_.find(o);
      out.push_back(it == values_.end() ? nullptr : &it->second);
    }
    return out;
  }

  // Replaces `instr` by `replacement` (already refined) everywhere.
  Status Replace(Instruction& instr, Instruction* replacement, std::vector<Instruction*>& dead) {
    KILN_RETURN_IF_ERROR(CheckRefinement(instr.shape(), replacement->shape(), "the result"));
    KILN_RETURN_IF_ERROR(instr.parent()->ReplaceAllUsesWith(&instr, replacement));
    dead.push_back(&instr);
    std::vector<const IntTensor*> values = OperandValues(*replacement);
    if (std::optional<IntTensor> v = FoldInstruction(*replacement, values)) values_[replacement] = std::move(*v);
    return Ok();
  }

  Status RefineInstruction(HloEmitter& emit, Instruction& instr, std::vector<Instruction*>& dead) {
    const std::vector<const IntTensor*> values = OperandValues(instr);
    if (IsDynamicShapeCall(instr)) {
      const ValueLookup known = [this](const Instruction* i) -> const IntTensor* {
        auto it = values_.find(i);
        return it == values_.end() ? nullptr : &it->second;
      };
      KILN_ASSIGN_OR_RETURN(Instruction * replacement, RewriteDynamicCall(emit, instr, known));
      return Replace(instr, replacement, dead);
    }
    if (instr.opcode() == Opcode::kGetDimensionSize) {
      if (std::optional<IntTensor> v = FoldInstruction(instr, values)) {
        return Replace(instr, emit.Constant(LiteralOf(*v)), dead);
      }
      return Ok();
    }
    KILN_ASSIGN_OR_RETURN(Shape shape, RefinedShape(instr, values));
    KILN_RETURN_IF_ERROR(CheckRefinement(instr.shape(), shape, "the result"));
    // A static shape stays as written (with its layout).
    if (HasDynamicDimension(instr.shape())) instr.set_shape(std::move(shape));
    if (std::optional<IntTensor> v = FoldInstruction(instr, values)) values_[&instr] = std::move(*v);
    return Ok();
  }

  Result<Computation*> Called(const Instruction& instr, std::string_view attribute) const {
    KILN_ASSIGN_OR_RETURN(const Computation* c, hlo::GetCalledComputation(instr, attribute));
    for (Computation* own : instr.called_computations()) {
      if (own == c) return own;
    }
    return InvalidArgumentError("does not call %" + c->name());
  }

  // Refines a callee for one tuple or array operand; its root shape.
  Result<Shape> RefineCallee(Computation& callee, const Shape& operand) {
    std::optional<IntTensor> ignored;
    KILN_RETURN_IF_ERROR(RefineComputation(callee, {operand}, {}, ignored));
    if (callee.root() == nullptr) return InvalidArgumentError("%" + callee.name() + " has no root");
    return callee.root()->shape();
  }

  Result<Shape> RefinedShape(Instruction& instr, const std::vector<const IntTensor*>& values) {
    const Shape& declared = instr.shape();
    switch (instr.opcode()) {
      case Opcode::kCall: {
        if (instr.called_computations().size() != 1) return declared;
        Computation& callee = *instr.called_computations()[0];
        std::vector<Shape> shapes;
        std::vector<std::optional<IntTensor>> known;
        for (size_t i = 0; i < static_cast<size_t>(instr.operand_count()); ++i) {
          shapes.push_back(instr.operand(i)->shape());
          known.push_back(values[i] != nullptr ? std::optional<IntTensor>(*values[i]) : std::nullopt);
        }
        std::optional<IntTensor> root_value;
        KILN_RETURN_IF_ERROR(RefineComputation(callee, shapes, known, root_value));
        if (root_value) values_[&instr] = std::move(*root_value);
        return callee.root()->shape();
      }
      case Opcode::kWhile: {
        KILN_ASSIGN_OR_RETURN(Computation * body, Called(instr, "body"));
        KILN_ASSIGN_OR_RETURN(Computation * condition, Called(instr, "condition"));
        const Shape& state = instr.operand(0)->shape();
        KILN_ASSIGN_OR_RETURN(Shape next, RefineCallee(*body, state));
        if (!(next == state) && !next.Compatible(state)) {
          return InvalidArgumentError("the loop body turns its state " + state.ToString() + " into " +
                                      next.ToString());
        }
        Result<Shape> predicate = RefineCallee(*condition, state);
        if (!predicate) return predicate.error();
        return state;
      }
      case Opcode::kConditional: {
        std::vector<Computation*> branches;
        if (instr.FindAttribute("branch_computations") != nullptr) {
          for (Computation* c : instr.called_computations()) branches.push_back(c);
        } else {
          KILN_ASSIGN_OR_RETURN(Computation * t, Called(instr, "true_computation"));
          KILN_ASSIGN_OR_RETURN(Computation * f, Called(instr, "false_computation"));
          branches = {t, f};
        }
        if (static_cast<int64_t>(branches.size()) + 1 != instr.operand_count()) return declared;
        std::optional<Shape> result;
        for (size_t k = 0; k < branches.size(); ++k) {
          KILN_ASSIGN_OR_RETURN(Shape s, RefineCallee(*branches[k], instr.operand(k + 1)->shape()));
          if (result && !(*result == s)) {
            return InvalidArgumentError("its branches give " + result->ToString() + " and " + s.ToString());
          }
          result = s;
        }
        return result ? *result : declared;
      }
      case Opcode::kBroadcast: return RefinedBroadcast(instr);
      case Opcode::kReshape: return RefinedReshape(instr);
      case Opcode::kConstant:
      case Opcode::kIota:
      case Opcode::kRng:
      case Opcode::kRngBitGenerator:
      case Opcode::kCustomCall:
      case Opcode::kInfeed:
      case Opcode::kRecv:
      case Opcode::kRecvDone:
        return declared;
      default:
        break;
    }
    return hlo::InferInstructionShape(instr, &declared);
  }

  // A broadcast's dynamic output dimensions are those of the operand
  // dimensions mapped to them.
  Result<Shape> RefinedBroadcast(const Instruction& instr) const {
    Shape shape = instr.shape();
    if (!HasDynamicDimension(shape)) return shape;
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::GetIntListAttributeOr(instr, "dimensions"));
    const Shape& in = instr.operand(0)->shape();
    std::vector<int64_t> sizes = shape.dimensions();
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (!shape.is_dynamic_dimension(d)) continue;
      const auto at = std::find(dims.begin(), dims.end(), d);
      if (at == dims.end()) return shape;  // not known here: left dynamic
      const int64_t k = at - dims.begin();
      if (k >= in.rank() || in.is_dynamic_dimension(k)) return shape;
      sizes[d] = in.dimensions(k);
    }
    return Shape(shape.element_type(), sizes);
  }

  // A reshape to one dynamic dimension takes the rest of the elements.
  Result<Shape> RefinedReshape(const Instruction& instr) const {
    const Shape& shape = instr.shape();
    const Shape& in = instr.operand(0)->shape();
    if (!HasDynamicDimension(shape) || HasDynamicDimension(in)) return shape;
    int64_t known = 1;
    int64_t dynamic = -1;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (!shape.is_dynamic_dimension(d)) {
        known *= shape.dimensions(d);
      } else if (dynamic >= 0) {
        return shape;  // two unknowns
      } else {
        dynamic = d;
      }
    }
    if (known == 0 || in.ElementCount() % known != 0) {
      return InvalidArgumentError("cannot reshape " + in.ToString() + " to " + shape.ToString());
    }
    std::vector<int64_t> sizes = shape.dimensions();
    sizes[dynamic] = in.ElementCount() / known;
    return Shape(shape.element_type(), sizes);
  }

  // Operands before users, after replacements were appended at the end.
  static Status Reorder(Computation& comp) {
    std::vector<Instruction*> order;
    std::unordered_set<const Instruction*> placed;
    std::vector<std::pair<Instruction*, size_t>> stack;
    for (const auto& start : comp.instructions()) {
      if (placed.contains(start.get())) continue;
      stack.push_back({start.get(), 0});
      while (!stack.empty()) {
        auto& [instr, next] = stack.back();
        const size_t inputs = static_cast<size_t>(instr->operand_count()) + instr->control_predecessors().size();
        if (next < inputs) {
          Instruction* input = next < static_cast<size_t>(instr->operand_count())
                                   ? instr->operand(static_cast<int64_t>(next))
                                   : instr->control_predecessors()[next - instr->operand_count()];
          ++next;
          if (!placed.contains(input)) stack.push_back({input, 0});
          continue;
        }
        if (placed.insert(instr).second) order.push_back(instr);
        stack.pop_back();
      }
    }
    return comp.SetInstructionOrder(order);
  }

  hlo::Module& module_;
  NameGen names_;
  std::unordered_map<const Instruction*, IntTensor> values_;
  std::unordered_map<const Computation*, std::vector<Shape>> signatures_;
  std::unordered_set<const Computation*> active_;
};

}  // namespace

bool NeedsRefinement(const hlo::Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      if (HasDynamicDimension(instr->shape()) || IsDynamicShapeCall(*instr)) return true;
    }
  }
  return false;
}

Status RefineShapes(hlo::Module& module, const RefineOptions& options) { return Refiner(module).Run(options); }

std::optional<std::string> FirstDynamicDimension(const hlo::Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      const std::string dynamic = DescribeDynamic(instr->shape());
      if (dynamic.empty()) continue;
      const std::string what = instr->opcode() == Opcode::kParameter
                                   ? "parameter " + std::to_string(instr->parameter_number()) + " (" +
                                         std::string(instr->name()) + ")"
                                   : "%" + std::string(instr->name());
      return what + " of %" + comp->name() + ": " + dynamic + " is dynamic";
    }
  }
  return std::nullopt;
}

}  // namespace kiln::stablehlo
