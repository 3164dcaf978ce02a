// Contractions and linear algebra: dot, dot_general, convolution, fft,
// triangular_solve, cholesky, batch norms, rng (op_handlers.h).
#include <charconv>

#include "compiler/stablehlo/op_handlers.h"
#include "compiler/stablehlo/window_text.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;


// operand_precision={default,high} from precision_config, when any is not
// the default.
// `{high,default}` of the op's precision_config; empty when all default.
std::string PrecisionText(const Operation& op) {
  const Attr* config = op.FindAttr("precision_config");
  if (config == nullptr || config->kind != Attr::Kind::kArray) return "";
  std::string text = "{";
  bool any = false;
  for (size_t i = 0; i < config->items.size(); ++i) {
    std::string v(EnumValueOf(config->items[i]));
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (v.empty()) v = "default";
    any |= v != "default";
    if (i > 0) text += ',';
    text += v;
  }
  text += "}";
  return any ? text : "";
}

void SetPrecision(Instruction* instr, const Operation& op) {
  const std::string text = PrecisionText(op);
  if (!text.empty()) HloEmitter::SetAttr(instr, "operand_precision", text);
}

std::string FloatText(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, p);
}

}  // namespace

Status ConvertDot(Converter& c, const Operation& op) {
  if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* lhs = c.Operand(op, 0);
  if (lhs->shape().rank() < 1 || lhs->shape().rank() > 2 || c.Operand(op, 1)->shape().rank() < 1) {
    return c.OpError(op, "dot takes vectors or matrices");
  }
  Instruction* d = c.emit().Add(Opcode::kDot, std::move(shape), c.Operands(op), "dot");
  HloEmitter::SetAttr(d, "lhs_contracting_dims", "{" + std::to_string(lhs->shape().rank() - 1) + "}");
  HloEmitter::SetAttr(d, "rhs_contracting_dims", "{0}");
  SetPrecision(d, op);
  return c.SetResults(op, d);
}

Status ConvertDotGeneral(Converter& c, const Operation& op) {
  if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  const TypeTable& types = c.types();
  auto field = [&](std::string_view name) {
    return IntListOf(types, StructField(op, "dot_dimension_numbers", name));
  };
  Instruction* d = c.emit().Add(Opcode::kDot, std::move(shape), c.Operands(op), "dot");
  const std::vector<int64_t> lhs_batch = field("lhs_batching_dimensions");
  const std::vector<int64_t> rhs_batch = field("rhs_batching_dimensions");
  const std::vector<int64_t> lhs_contract = field("lhs_contracting_dimensions");
  const std::vector<int64_t> rhs_contract = field("rhs_contracting_dimensions");
  if (!lhs_batch.empty()) HloEmitter::SetAttr(d, "lhs_batch_dims", IntListText(lhs_batch));
  if (!lhs_contract.empty()) HloEmitter::SetAttr(d, "lhs_contracting_dims", IntListText(lhs_contract));
  if (!rhs_batch.empty()) HloEmitter::SetAttr(d, "rhs_batch_dims", IntListText(rhs_batch));
  if (!rhs_contract.empty()) HloEmitter::SetAttr(d, "rhs_contracting_dims", IntListText(rhs_contract));
  SetPrecision(d, op);
  return c.SetResults(op, d);
}

// b01f_01io->b01f from a #stablehlo.conv's fields; fails past 10 spatial
// dimensions or on numbers that do not describe a rank.
Result<std::string> DimLabels(const Converter& c, const Operation& op) {
  const TypeTable& types = c.types();
  auto one = [&](std::string_view name) -> int64_t {
    std::vector<int64_t> v = IntListOf(types, StructField(op, "dimension_numbers", name));
    return v.size() == 1 ? v[0] : -1;
  };
  auto list = [&](std::string_view name) { return IntListOf(types, StructField(op, "dimension_numbers", name)); };
  auto part = [&](int64_t first, char a, int64_t second, char b, const std::vector<int64_t>& spatial,
                  int64_t rank) -> Result<std::string> {
    if (rank < 2 || spatial.size() > 10 || static_cast<int64_t>(spatial.size()) + 2 != rank || first < 0 ||
        second < 0 || first >= rank || second >= rank) {
      return c.OpError(op, "bad convolution dimension numbers");
    }
    std::string labels(static_cast<size_t>(rank), '?');
    labels[first] = a;
    labels[second] = b;
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] < 0 || spatial[i] >= rank || labels[spatial[i]] != '?') {
        return c.OpError(op, "bad convolution dimension numbers");
      }
      labels[spatial[i]] = static_cast<char>('0' + i);
    }
    return labels;
  };
  const int64_t in_rank = c.Operand(op, 0)->shape().rank();
  const int64_t kernel_rank = c.Operand(op, 1)->shape().rank();
  KILN_ASSIGN_OR_RETURN(std::string in, part(one("input_batch_dimension"), 'b', one("input_feature_dimension"), 'f',
                                             list("input_spatial_dimensions"), in_rank));
  KILN_ASSIGN_OR_RETURN(std::string kernel,
                        part(one("kernel_input_feature_dimension"), 'i', one("kernel_output_feature_dimension"),
                             'o', list("kernel_spatial_dimensions"), kernel_rank));
  KILN_ASSIGN_OR_RETURN(std::string out, part(one("output_batch_dimension"), 'b', one("output_feature_dimension"),
                                              'f', list("output_spatial_dimensions"), in_rank));
  return in + "_" + kernel + "->" + out;
}

Result<ConvolutionAttributes> ReadConvolutionAttributes(const Converter& c, const Operation& op) {
  if (op.operands.size() < 2) return c.OpError(op, "expected input and kernel");
  ConvolutionAttributes a;
  KILN_ASSIGN_OR_RETURN(a.dim_labels, DimLabels(c, op));
  KILN_ASSIGN_OR_RETURN(a.window, ReadWindow(c, op, "", "window_strides", "lhs_dilation", "rhs_dilation", "padding",
                                             "window_reversal"));
  const Shape& kernel = c.Operand(op, 1)->shape();
  for (int64_t d : IntListOf(c.types(), StructField(op, "dimension_numbers", "kernel_spatial_dimensions"))) {
    if (kernel.is_dynamic_dimension(d)) return c.Unsupported(op, "a kernel of dynamic spatial size is not supported");
    a.window.sizes.push_back(kernel.dimensions(d));
  }
  KILN_ASSIGN_OR_RETURN(a.feature_group_count, IntAttrValue(c, op, "feature_group_count", 1));
  KILN_ASSIGN_OR_RETURN(a.batch_group_count, IntAttrValue(c, op, "batch_group_count", 1));
  a.precision = PrecisionText(op);
  return a;
}

void ApplyConvolutionAttributes(Instruction* conv, const ConvolutionAttributes& a) {
  if (!a.window.sizes.empty()) HloEmitter::SetAttr(conv, "window", WindowText(a.window));
  HloEmitter::SetAttr(conv, "dim_labels", a.dim_labels);
  if (a.feature_group_count != 1) HloEmitter::SetAttr(conv, "feature_group_count", std::to_string(a.feature_group_count));
  if (a.batch_group_count != 1) HloEmitter::SetAttr(conv, "batch_group_count", std::to_string(a.batch_group_count));
  if (!a.precision.empty()) HloEmitter::SetAttr(conv, "operand_precision", a.precision);
}

Status ConvertConvolution(Converter& c, const Operation& op) {
  if (op.operands.size() != 2) return c.OpError(op, "expected input and kernel");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  KILN_ASSIGN_OR_RETURN(ConvolutionAttributes attributes, ReadConvolutionAttributes(c, op));
  Instruction* conv = c.emit().Add(Opcode::kConvolution, std::move(shape), c.Operands(op), "convolution");
  ApplyConvolutionAttributes(conv, attributes);
  return c.SetResults(op, conv);
}

Status ConvertFft(Converter& c, const Operation& op) {
  if (op.operands.size() != 1) return c.OpError(op, "expected one operand");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  std::string_view type = EnumAttrValue(op, "fft_type");
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") return c.OpError(op, "bad fft_type");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> length, IntListAttr(c, op, "fft_length"));
  Instruction* f = c.emit().Add(Opcode::kFft, std::move(shape), c.Operands(op), "fft");
  HloEmitter::SetAttr(f, "fft_type", type);
  HloEmitter::SetAttr(f, "fft_length", IntListText(length));
  return c.SetResults(op, f);
}

Status ConvertTriangularSolve(Converter& c, const Operation& op) {
  if (op.operands.size() != 2) return c.OpError(op, "expected two operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* t = c.emit().Add(Opcode::kTriangularSolve, std::move(shape), c.Operands(op), "triangular-solve");
  if (BoolAttrValue(op, "left_side")) HloEmitter::SetAttr(t, "left_side", "true");
  if (BoolAttrValue(op, "lower")) HloEmitter::SetAttr(t, "lower", "true");
  if (BoolAttrValue(op, "unit_diagonal")) HloEmitter::SetAttr(t, "unit_diagonal", "true");
  std::string_view transpose = EnumAttrValue(op, "transpose_a");
  if (transpose.empty()) transpose = "NO_TRANSPOSE";
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT") {
    return c.OpError(op, "bad transpose_a");
  }
  HloEmitter::SetAttr(t, "transpose_a", transpose);
  return c.SetResults(op, t);
}

Status ConvertCholesky(Converter& c, const Operation& op) {
  if (op.operands.size() != 1) return c.OpError(op, "expected one operand");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  Instruction* ch = c.emit().Add(Opcode::kCholesky, std::move(shape), c.Operands(op), "cholesky");
  if (BoolAttrValue(op, "lower")) HloEmitter::SetAttr(ch, "lower", "true");
  return c.SetResults(op, ch);
}

Status ConvertBatchNorm(Converter& c, const Operation& op) {
  const std::string_view name = op.name.substr(op.name.find('.') + 1);
  const Opcode opcode = name == "batch_norm_training"    ? Opcode::kBatchNormTraining
                        : name == "batch_norm_inference" ? Opcode::kBatchNormInference
                                                         : Opcode::kBatchNormGrad;
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  const Attr* epsilon = op.FindAttr("epsilon");
  if (epsilon == nullptr || epsilon->kind != Attr::Kind::kFloat) return c.OpError(op, "missing epsilon");
  KILN_ASSIGN_OR_RETURN(int64_t feature, IntAttrValue(c, op, "feature_index"));
  // f32 epsilons print as floats do (0.001 rather than 0.0010000000474974513).
  double eps = epsilon->f;
  if (c.types()[epsilon->type].element == hlo::PrimitiveType::kF32) eps = static_cast<float>(eps);
  Instruction* bn = c.emit().Add(opcode, std::move(shape), c.Operands(op));
  HloEmitter::SetAttr(bn, "epsilon", c.types()[epsilon->type].element == hlo::PrimitiveType::kF32
                                         ? [](float f) {
                                             char buf[32];
                                             auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), f);
                                             return std::string(buf, p);
                                           }(static_cast<float>(eps))
                                         : FloatText(eps));
  HloEmitter::SetAttr(bn, "feature_index", std::to_string(feature));
  return c.SetResults(op, bn);
}

Status ConvertRng(Converter& c, const Operation& op) {
  if (op.operands.size() != 3) return c.OpError(op, "expected a, b and shape");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  std::string_view distribution = EnumAttrValue(op, "rng_distribution");
  if (distribution != "UNIFORM" && distribution != "NORMAL") return c.OpError(op, "bad rng_distribution");
  Instruction* r = c.emit().Add(Opcode::kRng, std::move(shape), {c.Operand(op, 0), c.Operand(op, 1)}, "rng");
  HloEmitter::SetAttr(r, "distribution", distribution == "UNIFORM" ? "rng_uniform" : "rng_normal");
  return c.SetResults(op, r);
}

Status ConvertRngBitGenerator(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.size() != 2) return c.OpError(op, "expected a state and two results");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  std::string_view algorithm = EnumAttrValue(op, "rng_algorithm");
  std::string_view text = algorithm == "THREE_FRY" ? "rng_three_fry"
                          : algorithm == "PHILOX"  ? "rng_philox"
                                                   : "rng_default";
  Instruction* r = c.emit().Add(Opcode::kRngBitGenerator, std::move(shape), c.Operands(op), "rng-bit-generator");
  HloEmitter::SetAttr(r, "algorithm", text);
  return c.SetResults(op, r);
}

}  // namespace kiln::stablehlo::convert_internal
