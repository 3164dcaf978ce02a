// Fused attention custom calls priced as flash-attention kernels: their
// GEMMs, the causal half, grouped-query heads, the softmax's vector work,
// and inside a loop a step whose scores never reach HBM.
#include "runtime/timing/fused_attention.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"
#include "runtime/chip/chip_spec.h"
#include "runtime/timing/kernel_timer.h"
#include "runtime/timing/kernel_work.h"

namespace kiln::runtime::timing {
namespace {

// A module whose entry runs `target` on Q [1,1024,8,128] and K, V
// [1,1024,kv_heads,128] (bf16) with `mask_type`.
std::string AttentionModule(const std::string& target, int mask_type, int kv_heads = 2) {
  const std::string kv = "bf16[1,1024," + std::to_string(kv_heads) + ",128]{3,2,1,0}";
  const std::string config = "backend_config={attn_heads = 8 : i64, mask_type = " + std::to_string(mask_type) +
                             " : i64, qkv_layout = 9 : i64}";
  if (target == "te_fused_attn_forward_ffi") {
    return "HloModule attention\n\nENTRY e {\n  q = bf16[1,1024,8,128]{3,2,1,0} parameter(0)\n  k = " + kv +
           " parameter(1)\n  v = " + kv +
           " parameter(2)\n  ROOT a = (bf16[1,1024,8,128]{3,2,1,0}, f32[1,8,1024,1]{3,2,1,0}, u8[48]{0}) "
           "custom-call(q, k, v), custom_call_target=\"te_fused_attn_forward_ffi\", " +
           config + "\n}\n";
  }
  return "HloModule attention\n\nENTRY e {\n  q = bf16[1,1024,8,128]{3,2,1,0} parameter(0)\n  k = " + kv +
         " parameter(1)\n  v = " + kv +
         " parameter(2)\n  o = bf16[1,1024,8,128]{3,2,1,0} parameter(3)\n"
         "  ROOT a = (bf16[1,1024,8,128]{3,2,1,0}, " + kv + ", " + kv + ", u8[4096]{0}) "
         "custom-call(q, k, v, o), custom_call_target=\"te_fused_attn_backward_ffi\", " + config + "\n}\n";
}

std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  auto module = hlo::ParseModule(text);
  EXPECT_TRUE(module) << module.error().message;
  return module ? std::move(*module) : nullptr;
}

const hlo::Instruction& Root(const hlo::Module& module) { return *module.entry()->root(); }

constexpr double kScores = 8.0 * 1024 * 1024;  // heads x Sq x Skv, batch 1

TEST(FusedAttentionTest, ForwardIsTwoGemmsOverTheCausalHalf) {
  auto module = Parse(AttentionModule("te_fused_attn_forward_ffi", /*mask_type=*/3));
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(IsFusedAttention(Root(*module)));
  auto work = DescribeFusedAttention(Root(*module));
  ASSERT_TRUE(work) << work.error().message;
  ASSERT_EQ(work->contractions.size(), 2u);
  double flops = 0;
  for (const Contraction& c : work->contractions) {
    flops += c.gemm.Flops();
    EXPECT_TRUE(c.result_in_vmem);
    EXPECT_EQ(c.lhs_type, hlo::PrimitiveType::kBF16);
  }
  EXPECT_DOUBLE_EQ(work->scores, kScores / 2);
  EXPECT_DOUBLE_EQ(flops, 2 * (2 * kScores / 2 * 128));  // S = QK^T and O = PV, each 2 x scores x 128
  EXPECT_DOUBLE_EQ(work->vector_ops, 13 * kScores / 2);
}

TEST(FusedAttentionTest, BackwardIsFiveGemmsOverEveryScoreWithoutAMask) {
  auto module = Parse(AttentionModule("te_fused_attn_backward_ffi", /*mask_type=*/0, /*kv_heads=*/8));
  ASSERT_NE(module, nullptr);
  auto work = DescribeFusedAttention(Root(*module));
  ASSERT_TRUE(work) << work.error().message;
  ASSERT_EQ(work->contractions.size(), 5u);
  double flops = 0;
  for (const Contraction& c : work->contractions) flops += c.gemm.Flops();
  EXPECT_DOUBLE_EQ(flops, 5 * 2 * kScores * 128);
  EXPECT_DOUBLE_EQ(work->vector_ops, 14 * kScores);
}

TEST(FusedAttentionTest, HeadsThatDoNotGroupAreAnErrorNamingTheCall) {
  auto module = Parse(AttentionModule("te_fused_attn_forward_ffi", 3, /*kv_heads=*/3));
  ASSERT_NE(module, nullptr);
  auto work = DescribeFusedAttention(Root(*module));
  ASSERT_FALSE(work);
  EXPECT_NE(work.error().message.find("fused attention %a"), std::string::npos) << work.error().message;
  EXPECT_NE(work.error().message.find("groups of query heads"), std::string::npos) << work.error().message;
}

TEST(FusedAttentionTest, OtherCustomCallsAreNotAttention) {
  auto module = Parse("HloModule other\n\nENTRY e {\n  x = f32[8] parameter(0)\n"
                      "  ROOT y = f32[8] custom-call(x), custom_call_target=\"foo\"\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(IsFusedAttention(Root(*module)));
  EXPECT_FALSE(DescribeFusedAttention(Root(*module)));
}

// The kernel's FLOPs are its GEMMs and softmax, and its time at least
// their MXU and vector-unit time on the chip.
TEST(FusedAttentionTest, AnAttentionKernelIsTimedForItsWork) {
  auto module = Parse(AttentionModule("te_fused_attn_forward_ffi", 3));
  ASSERT_NE(module, nullptr);
  auto work = AnalyzeKernelWork(*module, WorkOptions{});
  ASSERT_TRUE(work) << work.error().message;
  const double gemm_flops = 2 * (2 * kScores / 2 * 128);
  EXPECT_DOUBLE_EQ(work->ContractionFlops(), gemm_flops);
  EXPECT_DOUBLE_EQ(work->vector_flops, 13 * kScores / 2);

  const ChipSpec& chip = *FindChip("v5e");
  std::vector<const hlo::Shape*> inputs, outputs;
  for (const hlo::Instruction* p : module->entry()->parameters()) inputs.push_back(&p->shape());
  for (const hlo::Shape& s : Root(*module).shape().tuple_shapes()) outputs.push_back(&s);
  KernelDescription kernel{.name = "attention", .kind = "custom", .module = module.get(), .inputs = inputs,
                           .outputs = outputs};
  auto profile = TimeKernel(kernel, chip, TimingOptions{});
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_DOUBLE_EQ(profile->flops, gemm_flops + 13 * kScores / 2);
  EXPECT_GE(profile->seconds, gemm_flops / chip.bf16_flops + 13 * kScores / 2 / chip.vector_flops);
}

}  // namespace
}  // namespace kiln::runtime::timing
