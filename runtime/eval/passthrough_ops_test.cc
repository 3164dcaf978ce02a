// Custom-calls, single-replica collectives, ids and unsupported ops.
#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::RunToText;

TEST(PassthroughOpsTest, UnsupportedCustomCallHasExactMessage) {
  EXPECT_EQ(RunToText(OneOp("f32[2] x", "f32[2]", "custom-call(x), custom_call_target=\"foo\""),
                      {Lit("f32[2] {1, 2}")}),
            "error: unsupported custom-call target \"foo\"");
}

TEST(PassthroughOpsTest, ShardingAnnotationsAreIdentity) {
  EXPECT_EQ(RunToText(OneOp("f32[2] x", "f32[2]",
                            "custom-call(x), custom_call_target=\"Sharding\", sharding={replicated}"),
                      {Lit("f32[2] {1, 2}")}),
            "f32[2] {1, 2}");
}

TEST(PassthroughOpsTest, CollectivesOverOneParticipant) {
  const char* hlo = R"(
HloModule collectives
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  ar = f32[2] all-reduce(x), replica_groups={}, to_apply=sum
  ag = f32[2] all-gather(ar), dimensions={0}, replica_groups={{0}}
  rs = f32[2] reduce-scatter(ag), dimensions={0}, replica_groups={{0}}, to_apply=sum
  a2a = f32[2] all-to-all(rs), dimensions={0}, replica_groups={{0}}
  kept = f32[2] collective-permute(a2a), source_target_pairs={{0,0}}
  lost = f32[2] collective-permute(a2a), source_target_pairs={{1,0}}
  id = u32[] replica-id()
  ROOT t = (f32[2], f32[2], u32[]) tuple(kept, lost, id)
})";
  EXPECT_EQ(RunToText(hlo, {Lit("f32[2] {1, 2}")}), "(f32[2] {1, 2}, f32[2] {0, 0}, u32[] 0)");
}

TEST(PassthroughOpsTest, AllGatherOverManyParticipantsFailsClearly) {
  std::string text = RunToText(OneOp("f32[2] x", "f32[4]",
                                     "all-gather(x), dimensions={0}, replica_groups={{0,1}}"),
                               {Lit("f32[2] {1, 2}")});
  EXPECT_NE(text.find("instruction %r: unsupported multi-participant all-gather: result shape "
                      "f32[4] implies more than one participant"),
            std::string::npos)
      << text;
}

TEST(PassthroughOpsTest, InfeedIsUnsupported) {
  const char* hlo = R"(
HloModule feed
ENTRY e {
  tok = token[] after-all()
  ROOT in = (f32[2], token[]) infeed(tok)
})";
  EXPECT_NE(RunToText(hlo).find("instruction %in: unsupported op infeed"), std::string::npos);
  Result<hlo::Literal> run = testing::Run(hlo);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::kUnimplemented) << "valid HLO kiln does not run";
}

}  // namespace
}  // namespace kiln::runtime
