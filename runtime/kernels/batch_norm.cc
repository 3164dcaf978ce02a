// batch-norm-training, batch-norm-inference and batch-norm-grad: per-feature
// normalisation over every dimension but `feature_index`, computed in double
// and rounded once to the result type. Variances are biased (divided by the
// element count per feature), as XLA's batch-norm expander computes them.
#include <cmath>
#include <string>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// Where the feature dimension lies in a row-major operand: element i has
// feature (i / stride) % features.
struct FeatureLayout {
  int64_t features = 0;
  int64_t stride = 1;
  int64_t per_feature = 0;  // elements that share one feature
  double epsilon = 0;

  int64_t FeatureOf(int64_t i) const { return (i / stride) % features; }
};

Result<FeatureLayout> GetFeatureLayout(const hlo::Instruction& instr, Operands operands,
                                       int64_t operand_count) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, operand_count));
  KILN_ASSIGN_OR_RETURN(int64_t feature_index, hlo::GetIntAttribute(instr, "feature_index"));
  KILN_ASSIGN_OR_RETURN(double epsilon, hlo::GetFloatAttributeOr(instr, "epsilon", 0.0));
  const hlo::Shape& shape = operands[0]->shape();
  if (feature_index < 0 || feature_index >= shape.rank()) {
    return KernelError(instr, "feature_index " + std::to_string(feature_index) +
                                  " is out of range for " + shape.ToString());
  }
  FeatureLayout layout;
  layout.features = shape.dimensions(feature_index);
  for (int64_t d = feature_index + 1; d < shape.rank(); ++d) layout.stride *= shape.dimensions(d);
  layout.per_feature = layout.features == 0 ? 0 : shape.ElementCount() / layout.features;
  layout.epsilon = epsilon;
  // Per-feature operands (scale, offset, mean, variance) have one element
  // per feature; per-element ones (grad_output) the operand's shape.
  for (size_t k = 1; k < operands.size(); ++k) {
    const int64_t n = operands[k]->element_count();
    if (n != layout.features && operands[k]->shape().dimensions() != shape.dimensions()) {
      return KernelError(instr, "operand " + std::to_string(k) + " " +
                                    operands[k]->shape().ToString() + " does not match " +
                                    std::to_string(layout.features) + " features");
    }
  }
  return layout;
}

// Mean and biased variance of each feature.
void FeatureMoments(const std::vector<double>& x, const FeatureLayout& layout,
                    std::vector<double>& mean, std::vector<double>& variance) {
  mean.assign(layout.features, 0.0);
  variance.assign(layout.features, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean[layout.FeatureOf(i)] += x[i];
  for (double& m : mean) m /= static_cast<double>(layout.per_feature);
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean[layout.FeatureOf(i)];
    variance[layout.FeatureOf(i)] += d * d;
  }
  for (double& v : variance) v /= static_cast<double>(layout.per_feature);
}

// (x - mean) / sqrt(variance + epsilon) * scale + offset, per element.
std::vector<double> Normalize(const std::vector<double>& x, const FeatureLayout& layout,
                              const std::vector<double>& scale, const std::vector<double>& offset,
                              const std::vector<double>& mean,
                              const std::vector<double>& variance) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t f = layout.FeatureOf(i);
    y[i] = (x[i] - mean[f]) / std::sqrt(variance[f] + layout.epsilon) * scale[f] + offset[f];
  }
  return y;
}

Result<hlo::Literal> ArrayResult(const hlo::Instruction& instr, const hlo::Shape& shape,
                                 const std::vector<double>& values) {
  if (!shape.IsArray() || shape.ElementCount() != static_cast<int64_t>(values.size())) {
    return KernelError(instr, "result shape " + shape.ToString() + " does not fit " +
                                  std::to_string(values.size()) + " values");
  }
  hlo::Literal out(shape);
  StoreElements<double>(values, out);
  return out;
}

Result<hlo::Literal> TripleResult(const hlo::Instruction& instr, const std::vector<double>& a,
                                  const std::vector<double>& b, const std::vector<double>& c) {
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 3) {
    return KernelError(instr, "result must be a 3-tuple");
  }
  std::vector<hlo::Literal> parts;
  KILN_ASSIGN_OR_RETURN(hlo::Literal pa, ArrayResult(instr, shape.tuple_shapes(0), a));
  KILN_ASSIGN_OR_RETURN(hlo::Literal pb, ArrayResult(instr, shape.tuple_shapes(1), b));
  KILN_ASSIGN_OR_RETURN(hlo::Literal pc, ArrayResult(instr, shape.tuple_shapes(2), c));
  parts.push_back(std::move(pa));
  parts.push_back(std::move(pb));
  parts.push_back(std::move(pc));
  return hlo::Literal::Tuple(std::move(parts));
}

}  // namespace

// (operand, scale, offset) -> (output, batch mean, batch variance).
Result<hlo::Literal> EvalBatchNormTraining(const hlo::Instruction& instr, Operands operands,
                                           EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, GetFeatureLayout(instr, operands, 3));
  KILN_RETURN_IF_ERROR(ctx.Charge(3 * operands[0]->element_count()));
  const std::vector<double> x = ElementsAs<double>(*operands[0]);
  std::vector<double> mean, variance;
  FeatureMoments(x, layout, mean, variance);
  const std::vector<double> y = Normalize(x, layout, ElementsAs<double>(*operands[1]),
                                          ElementsAs<double>(*operands[2]), mean, variance);
  return TripleResult(instr, y, mean, variance);
}

// (operand, scale, offset, mean, variance) -> output.
Result<hlo::Literal> EvalBatchNormInference(const hlo::Instruction& instr, Operands operands,
                                            EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, GetFeatureLayout(instr, operands, 5));
  KILN_RETURN_IF_ERROR(ctx.Charge(operands[0]->element_count()));
  const std::vector<double> y =
      Normalize(ElementsAs<double>(*operands[0]), layout, ElementsAs<double>(*operands[1]),
                ElementsAs<double>(*operands[2]), ElementsAs<double>(*operands[3]),
                ElementsAs<double>(*operands[4]));
  return ArrayResult(instr, instr.shape(), y);
}

// (operand, scale, mean, variance, grad_output) ->
// (grad_operand, grad_scale, grad_offset), with per feature
//   c0 = sum(grad_output), c1 = sum(grad_output * (x - mean)), N elements,
//   grad_offset = c0, grad_scale = c1 / sqrt(var + eps),
//   grad_operand = scale / sqrt(var + eps) *
//                  (grad_output - c0 / N - (x - mean) * c1 / (N * (var + eps))).
Result<hlo::Literal> EvalBatchNormGrad(const hlo::Instruction& instr, Operands operands,
                                       EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, GetFeatureLayout(instr, operands, 5));
  if (operands[4]->shape().dimensions() != operands[0]->shape().dimensions()) {
    return KernelError(instr, "grad_output must have the operand's shape");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(3 * operands[0]->element_count()));
  const std::vector<double> x = ElementsAs<double>(*operands[0]);
  const std::vector<double> scale = ElementsAs<double>(*operands[1]);
  const std::vector<double> mean = ElementsAs<double>(*operands[2]);
  const std::vector<double> variance = ElementsAs<double>(*operands[3]);
  const std::vector<double> grad = ElementsAs<double>(*operands[4]);
  std::vector<double> c0(layout.features, 0.0), c1(layout.features, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t f = layout.FeatureOf(i);
    c0[f] += grad[i];
    c1[f] += grad[i] * (x[i] - mean[f]);
  }
  const double n = static_cast<double>(layout.per_feature);
  std::vector<double> grad_operand(x.size()), grad_scale(layout.features);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t f = layout.FeatureOf(i);
    const double var_eps = variance[f] + layout.epsilon;
    grad_operand[i] = scale[f] / std::sqrt(var_eps) *
                      (grad[i] - c0[f] / n - (x[i] - mean[f]) * c1[f] / (n * var_eps));
  }
  for (int64_t f = 0; f < layout.features; ++f) {
    grad_scale[f] = c1[f] / std::sqrt(variance[f] + layout.epsilon);
  }
  return TripleResult(instr, grad_operand, grad_scale, c0);
}

}  // namespace kiln::runtime
