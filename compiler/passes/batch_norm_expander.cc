#include "compiler/passes/batch_norm_expander.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/int_list_text.h"
#include "compiler/hlo/op_attributes.h"

namespace kiln::passes {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

bool IsBatchNorm(Opcode op) {
  return op == Opcode::kBatchNormTraining || op == Opcode::kBatchNormInference ||
         op == Opcode::kBatchNormGrad;
}

// The type the statistics and normalisation are computed in; kInvalid when
// the element type is not one the expansion handles.
PrimitiveType ComputeType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
    case PrimitiveType::kF32:
      return PrimitiveType::kF32;
    case PrimitiveType::kF64:
      return PrimitiveType::kF64;
    default:
      return PrimitiveType::kInvalid;
  }
}

// One `add` reducer per compute type, made on first use and placed first
// in the module (it calls nothing, so it may precede every caller).
class Reducers {
 public:
  explicit Reducers(hlo::Module& module) : module_(module) {}

  Computation* Add(PrimitiveType t) {
    auto it = made_.find(t);
    if (it != made_.end()) return it->second;
    std::string name = "batch_norm_add_" + std::string(hlo::PrimitiveTypeName(t));
    for (int k = 1; module_.FindComputation(name) != nullptr; ++k) {
      name = "batch_norm_add_" + std::string(hlo::PrimitiveTypeName(t)) + "." + std::to_string(k);
    }
    auto comp = std::make_unique<Computation>(name);
    const Shape scalar(t, {});
    Instruction* lhs = comp->AddInstruction(Instruction::CreateParameter(0, scalar, "lhs"));
    Instruction* rhs = comp->AddInstruction(Instruction::CreateParameter(1, scalar, "rhs"));
    comp->set_root(comp->AddInstruction(Instruction::Create(Opcode::kAdd, scalar, {lhs, rhs}, "sum")));
    const Computation* first = module_.computations().empty() ? nullptr : module_.computations()[0].get();
    Computation* added = module_.InsertComputation(std::move(comp), first);
    made_[t] = added;
    return added;
  }

 private:
  hlo::Module& module_;
  std::map<PrimitiveType, Computation*> made_;
};

// Adds the expansion's instructions to one computation, named after the
// batch-norm they replace and unique within the computation.
class Expansion {
 public:
  Expansion(Computation& comp, const Instruction& bn, PrimitiveType t, int64_t feature_index,
            std::unordered_set<std::string>& names, Reducers& reducers)
      : comp_(comp), bn_(bn), t_(t), feature_index_(feature_index), names_(names),
        reducers_(reducers) {
    const Shape& x = bn.operand(0)->shape();
    array_ = x;  // the operand's dimensions and layout, in the compute type
    array_.set_element_type(t);
    features_ = Shape(t, {x.dimensions(feature_index)});
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d != feature_index) reduced_dims_.push_back(d);
    }
    per_feature_ = 1;
    for (int64_t d : reduced_dims_) per_feature_ *= x.dimensions(d);
  }

  // `v` in the compute type (a convert when it is not already).
  Instruction* InComputeType(Instruction* v) {
    if (v->shape().element_type() == t_) return v;
    Shape shape = v->shape();
    shape.set_element_type(t_);
    return Op(Opcode::kConvert, shape, {v}, "convert");
  }

  // `v` as the batch-norm's result shape `target` (element type, layout).
  Instruction* AsResult(Instruction* v, const Shape& target) {
    if (v->shape() == target) return v;
    const Opcode op = v->shape().element_type() == target.element_type() ? Opcode::kCopy
                                                                          : Opcode::kConvert;
    return Op(op, target, {v}, "result");
  }

  // Per-feature sums of an array in the compute type.
  Instruction* FeatureSum(Instruction* v, const char* what) {
    Instruction* sum = Op(Opcode::kReduce, features_, {v, Scalar(0.0)}, what);
    sum->SetTextAttribute("dimensions", hlo::IntListText(reduced_dims_));
    sum->AddAttribute(hlo::Attribute::Calls("to_apply", reducers_.Add(t_)));
    return sum;
  }

  // A per-feature value broadcast over the array.
  Instruction* OverArray(Instruction* per_feature) {
    Instruction* b = Op(Opcode::kBroadcast, array_, {per_feature}, "broadcast");
    b->SetTextAttribute("dimensions", hlo::IntListText({feature_index_}));
    return b;
  }

  // A scalar broadcast to one value per feature.
  Instruction* PerFeature(double value) {
    Instruction* b = Op(Opcode::kBroadcast, features_, {Scalar(value)}, "broadcast");
    b->SetTextAttribute("dimensions", "{}");
    return b;
  }

  // rsqrt(var + eps), per feature.
  Instruction* InverseDeviation(Instruction* var, double epsilon) {
    Instruction* var_eps = Elementwise(Opcode::kAdd, var, PerFeature(epsilon), "var_eps");
    return Op(Opcode::kRsqrt, features_, {var_eps}, "rsqrt");
  }

  Instruction* Elementwise(Opcode op, Instruction* a, Instruction* b, const char* what) {
    return Op(op, a->shape(), {a, b}, what);
  }

  Instruction* Tuple(const Shape& shape, std::vector<Instruction*> elements) {
    return Op(Opcode::kTuple, shape, std::move(elements), "tuple");
  }

  int64_t per_feature() const { return per_feature_; }

 private:
  Instruction* Scalar(double value) {
    hlo::Literal literal(Shape(t_, {}));
    if (t_ == PrimitiveType::kF64) {
      literal.Set<double>(0, value);
    } else {
      literal.Set<float>(0, static_cast<float>(value));
    }
    return Add(Instruction::CreateConstant(std::move(literal), UniqueName("constant")));
  }

  Instruction* Op(Opcode op, const Shape& shape, std::vector<Instruction*> operands,
                  const char* what) {
    return Add(Instruction::Create(op, shape, std::move(operands), UniqueName(what)));
  }

  Instruction* Add(hlo::InstructionPtr instr) {
    instr->set_source_line(bn_.source_line());
    return comp_.AddInstruction(std::move(instr));
  }

  std::string UniqueName(const char* what) {
    std::string name = std::string(bn_.name()) + "." + what;
    for (int k = 1; names_.count(name) != 0; ++k) {
      name = std::string(bn_.name()) + "." + what + "." + std::to_string(k);
    }
    names_.insert(name);
    return name;
  }

  Computation& comp_;
  const Instruction& bn_;
  PrimitiveType t_;
  int64_t feature_index_;
  std::unordered_set<std::string>& names_;
  Reducers& reducers_;
  Shape array_;
  Shape features_;
  std::vector<int64_t> reduced_dims_;
  int64_t per_feature_ = 0;
};

// (x - mean) * inv * scale + offset over the array; every argument but x
// is per feature and in the compute type.
Instruction* Normalize(Expansion& e, Instruction* x, Instruction* mean, Instruction* inv,
                       Instruction* scale, Instruction* offset) {
  Instruction* centered = e.Elementwise(Opcode::kSubtract, x, e.OverArray(mean), "centered");
  Instruction* normed = e.Elementwise(Opcode::kMultiply, centered, e.OverArray(inv), "normalized");
  Instruction* scaled = e.Elementwise(Opcode::kMultiply, normed, e.OverArray(scale), "scaled");
  return e.Elementwise(Opcode::kAdd, scaled, e.OverArray(offset), "shifted");
}

// The expansion's replacement for `bn`: a tuple for training and grad, the
// normalised array for inference.
Instruction* Expand(Expansion& e, const Instruction& bn, double epsilon) {
  std::vector<Instruction*> in;
  for (Instruction* operand : bn.operands()) in.push_back(e.InComputeType(operand));
  const Shape& shape = bn.shape();
  Instruction* n = e.PerFeature(static_cast<double>(e.per_feature()));
  switch (bn.opcode()) {
    case Opcode::kBatchNormTraining: {  // (x, scale, offset) -> (y, mean, var)
      Instruction* x = in[0];
      Instruction* mean = e.Elementwise(Opcode::kDivide, e.FeatureSum(x, "sum"), n, "mean");
      Instruction* squares = e.Elementwise(Opcode::kMultiply, x, x, "square");
      Instruction* mean_square =
          e.Elementwise(Opcode::kDivide, e.FeatureSum(squares, "sum_squares"), n, "mean_square");
      Instruction* var =
          e.Elementwise(Opcode::kSubtract, mean_square,
                        e.Elementwise(Opcode::kMultiply, mean, mean, "mean_squared"), "variance");
      Instruction* y = Normalize(e, x, mean, e.InverseDeviation(var, epsilon), in[1], in[2]);
      return e.Tuple(shape, {e.AsResult(y, shape.tuple_shapes(0)),
                             e.AsResult(mean, shape.tuple_shapes(1)),
                             e.AsResult(var, shape.tuple_shapes(2))});
    }
    case Opcode::kBatchNormInference: {  // (x, scale, offset, mean, var) -> y
      Instruction* y =
          Normalize(e, in[0], in[3], e.InverseDeviation(in[4], epsilon), in[1], in[2]);
      return e.AsResult(y, shape);
    }
    case Opcode::kBatchNormGrad: {  // (x, scale, mean, var, dy) -> (dx, dscale, doffset)
      Instruction* dy = in[4];
      Instruction* inv = e.InverseDeviation(in[3], epsilon);
      Instruction* centered =
          e.Elementwise(Opcode::kSubtract, in[0], e.OverArray(in[2]), "centered");
      Instruction* sum_dy = e.FeatureSum(dy, "sum_grad");
      Instruction* sum_dy_centered = e.FeatureSum(
          e.Elementwise(Opcode::kMultiply, dy, centered, "grad_centered"), "sum_grad_centered");
      // dx = scale * inv * (dy - sum_dy / N - centered * sum_dy_centered * inv^2 / N)
      Instruction* mean_dy = e.Elementwise(Opcode::kDivide, sum_dy, n, "mean_grad");
      Instruction* inv_square = e.Elementwise(Opcode::kMultiply, inv, inv, "inv_square");
      Instruction* slope = e.Elementwise(
          Opcode::kDivide,
          e.Elementwise(Opcode::kMultiply, sum_dy_centered, inv_square, "weighted"), n, "slope");
      Instruction* inner = e.Elementwise(
          Opcode::kSubtract, e.Elementwise(Opcode::kSubtract, dy, e.OverArray(mean_dy), "grad_less_mean"),
          e.Elementwise(Opcode::kMultiply, centered, e.OverArray(slope), "projection"), "inner");
      Instruction* gain = e.Elementwise(Opcode::kMultiply, in[1], inv, "gain");
      Instruction* dx = e.Elementwise(Opcode::kMultiply, inner, e.OverArray(gain), "grad_operand");
      Instruction* dscale =
          e.Elementwise(Opcode::kMultiply, sum_dy_centered, inv, "grad_scale");
      return e.Tuple(shape, {e.AsResult(dx, shape.tuple_shapes(0)),
                             e.AsResult(dscale, shape.tuple_shapes(1)),
                             e.AsResult(sum_dy, shape.tuple_shapes(2))});
    }
    default:
      return nullptr;
  }
}

// Whether the expansion handles `bn`: arrays of one floating type, static
// shapes, per-feature operands of one element per feature, a per-element
// operand (grad's dy) of x's dimensions and a result of the expected form.
bool Expandable(const Instruction& bn, int64_t feature_index) {
  if (!bn.control_predecessors().empty()) return false;
  const Shape& x = bn.operand(0)->shape();
  if (!x.IsArray() || !x.is_static() || feature_index < 0 || feature_index >= x.rank()) return false;
  if (ComputeType(x.element_type()) == PrimitiveType::kInvalid) return false;
  const std::vector<int64_t> per_feature = {x.dimensions(feature_index)};
  for (int64_t k = 1; k < bn.operand_count(); ++k) {
    const Shape& s = bn.operand(k)->shape();
    const bool per_element = bn.opcode() == Opcode::kBatchNormGrad && k == 4;
    if (!s.IsArray() || s.element_type() != x.element_type() ||
        s.dimensions() != (per_element ? x.dimensions() : per_feature)) {
      return false;
    }
  }
  const Shape& result = bn.shape();
  if (bn.opcode() == Opcode::kBatchNormInference) return result.SameDimensions(x);
  return result.IsTuple() && result.tuple_shapes().size() == 3 &&
         result.tuple_shapes(0).IsArray() && result.tuple_shapes(0).dimensions() == x.dimensions() &&
         result.tuple_shapes(1).IsArray() && result.tuple_shapes(1).dimensions() == per_feature &&
         result.tuple_shapes(2).IsArray() && result.tuple_shapes(2).dimensions() == per_feature;
}

}  // namespace

Result<bool> BatchNormExpander::Run(hlo::Module& module) {
  Reducers reducers(module);
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& comp : module.computations()) computations.push_back(comp.get());
  for (Computation* comp : computations) {
    std::vector<Instruction*> batch_norms;
    for (const auto& instr : comp->instructions()) {
      if (IsBatchNorm(instr->opcode())) batch_norms.push_back(instr.get());
    }
    if (batch_norms.empty()) continue;
    std::unordered_set<std::string> names;
    for (const auto& instr : comp->instructions()) names.emplace(instr->name());
    // Each expansion's instructions, listed right after its batch-norm so
    // that operands still come before users.
    std::map<const Instruction*, std::vector<Instruction*>> added;
    const int64_t original_count = comp->instruction_count();
    for (Instruction* bn : batch_norms) {
      Result<hlo::BatchNormConfig> config = hlo::GetBatchNormConfig(*bn);
      if (!config || !Expandable(*bn, config->feature_index)) continue;
      const PrimitiveType t = ComputeType(bn->operand(0)->shape().element_type());
      const int64_t first_new = comp->instruction_count();
      Expansion e(*comp, *bn, t, config->feature_index, names, reducers);
      Instruction* replacement = Expand(e, *bn, config->epsilon);
      if (replacement == nullptr) continue;
      KILN_RETURN_IF_ERROR(comp->ReplaceAllUsesWith(bn, replacement));
      for (int64_t i = first_new; i < comp->instruction_count(); ++i) {
        added[bn].push_back(comp->instructions()[i].get());
      }
    }
    if (added.empty()) continue;
    std::vector<Instruction*> order;
    order.reserve(comp->instruction_count());
    for (int64_t i = 0; i < original_count; ++i) {
      Instruction* instr = comp->instructions()[i].get();
      order.push_back(instr);
      auto it = added.find(instr);
      if (it != added.end()) order.insert(order.end(), it->second.begin(), it->second.end());
    }
    KILN_RETURN_IF_ERROR(comp->SetInstructionOrder(order));
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
