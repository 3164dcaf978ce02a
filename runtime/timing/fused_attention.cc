#include "runtime/timing/fused_attention.h"

#include <charconv>
#include <string>
#include <string_view>

#include "compiler/hlo/op_attributes.h"

namespace kiln::runtime::timing {
namespace {

using hlo::Instruction;

constexpr std::string_view kForward = "te_fused_attn_forward_ffi";
constexpr std::string_view kBackward = "te_fused_attn_backward_ffi";

// Softmax vector operations per score (fused_attention.h).
constexpr double kForwardOpsPerScore = 13;
constexpr double kBackwardOpsPerScore = 14;

std::string Target(const Instruction& instr) {
  if (instr.opcode() != hlo::Opcode::kCustomCall) return "";
  Result<std::string> target = hlo::GetStringAttribute(instr, "custom_call_target");
  return target ? *target : "";
}

// `mask_type = N` of the backend config; TransformerEngine's causal kinds
// are 2..5 (causal, padding-causal and their bottom-right variants).
bool Causal(const Instruction& instr) {
  const hlo::Attribute* config = instr.FindAttribute("backend_config");
  if (config == nullptr) return false;
  const std::string_view text = config->value;
  const size_t at = text.find("mask_type = ");
  if (at == std::string_view::npos) return false;
  int value = 0;
  const char* begin = text.data() + at + 12;
  if (std::from_chars(begin, text.data() + text.size(), value).ec != std::errc()) return false;
  return value >= 2 && value <= 5;
}

Contraction Gemm(const Instruction& instr, double batch, int64_t m, int64_t k, int64_t n, hlo::PrimitiveType type) {
  Contraction c;
  c.instruction = &instr;
  c.gemm = GemmShape{batch, m, n, k};
  c.lhs_type = c.rhs_type = type;
  c.out_type = hlo::PrimitiveType::kF32;
  c.result_in_vmem = true;
  return c;
}

}  // namespace

bool IsFusedAttention(const Instruction& instr) {
  const std::string target = Target(instr);
  return target == kForward || target == kBackward;
}

Result<FusedAttentionWork> DescribeFusedAttention(const Instruction& instr) {
  const std::string target = Target(instr);
  if (target != kForward && target != kBackward) {
    return InternalError("%" + std::string(instr.name()) + " is not a fused attention custom call");
  }
  auto fail = [&](const std::string& why) {
    return InvalidArgumentError("fused attention %" + std::string(instr.name()) + ": " + why);
  };
  if (instr.operand_count() < 3) return fail("expected Q, K and V as operands 0, 1 and 2");
  const hlo::Shape& q = instr.operand(0)->shape();
  const hlo::Shape& k = instr.operand(1)->shape();
  const hlo::Shape& v = instr.operand(2)->shape();
  if (!q.IsArray() || !k.IsArray() || !v.IsArray() || q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
    return fail("Q, K and V must be rank-4 arrays [batch, seq, heads, head_dim], got " + q.ToString() + ", " +
                k.ToString() + ", " + v.ToString());
  }
  const int64_t batch = q.dimensions(0), sq = q.dimensions(1), heads = q.dimensions(2), dqk = q.dimensions(3);
  const int64_t skv = k.dimensions(1), kv_heads = k.dimensions(2), dv = v.dimensions(3);
  if (k.dimensions(0) != batch || v.dimensions(0) != batch || v.dimensions(1) != skv ||
      v.dimensions(2) != kv_heads || k.dimensions(3) != dqk || kv_heads < 1 || heads % kv_heads != 0) {
    return fail("Q " + q.ToString() + ", K " + k.ToString() + " and V " + v.ToString() +
                " do not line up as [batch, seq, heads, head_dim] with whole groups of query heads per K/V head");
  }
  const double share = Causal(instr) ? 0.5 : 1.0;  // blocks above the diagonal are skipped
  const double pairs = static_cast<double>(batch) * static_cast<double>(heads) * share;
  const hlo::PrimitiveType type = q.element_type();
  FusedAttentionWork work;
  work.scores = pairs * static_cast<double>(sq) * static_cast<double>(skv);
  work.contractions.push_back(Gemm(instr, pairs, sq, dqk, skv, type));  // S = Q K^T
  if (target == kForward) {
    work.contractions.push_back(Gemm(instr, pairs, sq, skv, dv, type));  // O = P V
    work.vector_ops = work.scores * kForwardOpsPerScore;
    return work;
  }
  work.contractions.push_back(Gemm(instr, pairs, sq, dv, skv, type));   // dP = dO V^T
  work.contractions.push_back(Gemm(instr, pairs, skv, sq, dv, type));   // dV = P^T dO
  work.contractions.push_back(Gemm(instr, pairs, sq, skv, dqk, type));  // dQ = dS K
  work.contractions.push_back(Gemm(instr, pairs, skv, sq, dqk, type));  // dK = dS^T Q
  work.vector_ops = work.scores * kBackwardOpsPerScore;
  return work;
}

}  // namespace kiln::runtime::timing
