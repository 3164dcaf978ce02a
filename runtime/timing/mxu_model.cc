#include "runtime/timing/mxu_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler/hlo/op_attributes.h"
#include "runtime/chip/op_kinds.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Instruction;
using hlo::PrimitiveType;

double Product(const std::vector<int64_t>& dims, const std::set<int64_t>& pick) {
  double p = 1;
  for (int64_t d : pick) p *= static_cast<double>(dims[d]);
  return p;
}

int64_t ClampToInt(double v) { return static_cast<int64_t>(std::clamp(v, 1.0, 9.0e18)); }

// bf16 passes for operands of `type` at `precision`.
int PassesFor(PrimitiveType type, hlo::Precision precision) {
  if (hlo::BitWidth(type) < 32 || !hlo::IsFloatingPoint(type)) return 1;
  return MxuPasses(precision);
}

Status SetTypesAndPasses(const Instruction& instr, Contraction& c) {
  c.lhs_type = instr.operand(0)->shape().element_type();
  c.rhs_type = instr.operand(1)->shape().element_type();
  if (instr.shape().IsArray()) c.out_type = instr.shape().element_type();
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Precision> precision, hlo::GetOperandPrecision(instr));
  hlo::Precision p = hlo::Precision::kDefault;
  for (hlo::Precision q : precision) {
    if (q == hlo::Precision::kHighest || (q == hlo::Precision::kHigh && p != hlo::Precision::kHighest)) {
      p = q;
    }
  }
  c.passes = std::max(PassesFor(c.lhs_type, p), PassesFor(c.rhs_type, p));
  return Ok();
}

Result<Contraction> DescribeDot(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(hlo::DotDimensionNumbers dnums, hlo::GetDotDimensionNumbers(instr));
  const std::vector<int64_t>& lhs = instr.operand(0)->shape().dimensions();
  const std::vector<int64_t>& rhs = instr.operand(1)->shape().dimensions();
  std::set<int64_t> lhs_batch(dnums.lhs_batch_dimensions.begin(), dnums.lhs_batch_dimensions.end());
  std::set<int64_t> lhs_contract(dnums.lhs_contracting_dimensions.begin(),
                                 dnums.lhs_contracting_dimensions.end());
  std::set<int64_t> rhs_batch(dnums.rhs_batch_dimensions.begin(), dnums.rhs_batch_dimensions.end());
  std::set<int64_t> rhs_contract(dnums.rhs_contracting_dimensions.begin(),
                                 dnums.rhs_contracting_dimensions.end());
  std::set<int64_t> lhs_free, rhs_free;
  for (int64_t d = 0; d < static_cast<int64_t>(lhs.size()); ++d) {
    if (!lhs_batch.contains(d) && !lhs_contract.contains(d)) lhs_free.insert(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rhs.size()); ++d) {
    if (!rhs_batch.contains(d) && !rhs_contract.contains(d)) rhs_free.insert(d);
  }
  for (int64_t d : lhs_batch) {
    if (d >= static_cast<int64_t>(lhs.size()))
      return InvalidArgumentError("dot %" + std::string(instr.name()) + ": bad batch dimension");
  }
  for (int64_t d : lhs_contract) {
    if (d >= static_cast<int64_t>(lhs.size())) {
      return InvalidArgumentError("dot %" + std::string(instr.name()) + ": bad contracting dimension");
    }
  }
  Contraction c;
  c.instruction = &instr;
  c.gemm.batch = Product(lhs, lhs_batch);
  c.gemm.m = ClampToInt(Product(lhs, lhs_free));
  c.gemm.k = ClampToInt(Product(lhs, lhs_contract));
  c.gemm.n = ClampToInt(Product(rhs, rhs_free));
  c.lhs_k_minor = lhs.empty() || lhs_contract.contains(static_cast<int64_t>(lhs.size()) - 1);
  c.rhs_n_minor = !rhs.empty() && rhs_free.contains(static_cast<int64_t>(rhs.size()) - 1);
  KILN_RETURN_IF_ERROR(SetTypesAndPasses(instr, c));
  return c;
}

Result<Contraction> DescribeConvolution(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(hlo::ConvolutionDimensionNumbers dn,
                        hlo::GetConvolutionDimensionNumbers(instr));
  KILN_ASSIGN_OR_RETURN(int64_t feature_groups, hlo::GetFeatureGroupCount(instr));
  KILN_ASSIGN_OR_RETURN(int64_t batch_groups, hlo::GetBatchGroupCount(instr));
  const std::vector<int64_t>& in = instr.operand(0)->shape().dimensions();
  const std::vector<int64_t>& kernel = instr.operand(1)->shape().dimensions();
  const std::vector<int64_t>& out = instr.shape().dimensions();
  auto at = [&](const std::vector<int64_t>& dims, int64_t d) -> double {
    return d >= 0 && d < static_cast<int64_t>(dims.size()) ? static_cast<double>(dims[d]) : 1.0;
  };
  double groups = static_cast<double>(std::max<int64_t>(1, feature_groups * batch_groups));
  double out_spatial = 1, window = 1;
  for (int64_t d : dn.output_spatial_dimensions) out_spatial *= at(out, d);
  for (int64_t d : dn.kernel_spatial_dimensions) window *= at(kernel, d);
  Contraction c;
  c.instruction = &instr;
  c.gemm.batch = groups;
  c.gemm.m = ClampToInt(at(out, dn.output_batch_dimension) * out_spatial);
  c.gemm.n = ClampToInt(at(out, dn.output_feature_dimension) / groups);
  c.gemm.k = ClampToInt(at(kernel, dn.kernel_input_feature_dimension) * window);
  c.lhs_k_minor = dn.input_feature_dimension == static_cast<int64_t>(in.size()) - 1;
  c.rhs_n_minor = dn.kernel_output_feature_dimension == static_cast<int64_t>(kernel.size()) - 1;
  KILN_RETURN_IF_ERROR(SetTypesAndPasses(instr, c));
  return c;
}

}  // namespace

Result<Contraction> DescribeContraction(const Instruction& instr) {
  if (instr.operand_count() < 2) {
    return InternalError("%" + std::string(instr.name()) + ": a contraction needs two operands");
  }
  if (instr.opcode() == hlo::Opcode::kDot) return DescribeDot(instr);
  if (instr.opcode() == hlo::Opcode::kConvolution) return DescribeConvolution(instr);
  return InternalError("%" + std::string(instr.name()) + " (" + instr.OpcodeText() +
                       ") is not a dot or convolution");
}

double MxuPeakFlops(const Contraction& c, const ChipSpec& chip) {
  return MxuPeakRate(chip, c.lhs_type, c.rhs_type);
}

double MxuSeconds(const Contraction& c, const GemmShape& block, const ChipSpec& chip) {
  const int64_t mxu = std::max(chip.mxu_size, 1);
  const double mxus = std::max(1, chip.tensor_cores * chip.mxus_per_core);
  const int64_t sublanes = SublaneTile(c.lhs_type);
  const double rows = static_cast<double>(RoundUp(std::max<int64_t>(block.m, 1), sublanes));
  const double weight_tiles = static_cast<double>(CeilDiv(std::max<int64_t>(block.k, 1), mxu)) *
                              static_cast<double>(CeilDiv(std::max<int64_t>(block.n, 1), mxu));
  // The MXUs take different weight tiles at once; a round streams `rows`
  // rows through every MXU.
  const double rounds = std::ceil(std::max(block.batch, 1.0) * weight_tiles / mxus);
  const double cycle = 2.0 * static_cast<double>(mxu * mxu) * mxus / MxuPeakFlops(c, chip);
  return rounds * rows * cycle * c.passes;
}

}  // namespace kiln::runtime::timing
