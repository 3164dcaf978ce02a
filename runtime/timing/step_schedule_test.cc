#include "runtime/timing/step_schedule.h"

#include <gtest/gtest.h>

#include <memory>
#include <string_view>
#include <vector>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::timing {
namespace {

// One layer of a loop body: the next layer's weights all-gathered while
// this layer's matmul runs, then an all-reduce its result must wait for.
constexpr std::string_view kLayer = R"(HloModule layer
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY body {
  p = (f32[256,512], f32[64,512]) parameter(0)
  x = f32[256,512] get-tuple-element(p), index=0
  w = f32[64,512] get-tuple-element(p), index=1
  gathered = f32[512,512] all-gather(w), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}
  y = f32[256,512] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  summed = f32[256,512] all-reduce(y), replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=add
  z = f32[256,512] dot(summed, gathered), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  v = f32[256,512] add(x, x)
  ROOT r = (f32[256,512], f32[64,512]) tuple(z, w)
})";

class StepScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto parsed = hlo::ParseModule(kLayer);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    module_ = std::move(*parsed);
  }
  TimedStep Step(std::string_view name, double seconds) {
    for (const auto& instr : module_->entry()->instructions()) {
      if (instr->name() == name) return {instr.get(), seconds, hlo::CategoryOf(instr->opcode()) == hlo::OpcodeCategory::kCollective};
    }
    ADD_FAILURE() << name;
    return {};
  }
  std::unique_ptr<hlo::Module> module_;
};

TEST_F(StepScheduleTest, AllGatherOfParametersOverlapsTheMatmulThatDoesNotReadIt) {
  std::vector<TimedStep> steps = {Step("gathered", 3), Step("y", 5)};
  EXPECT_DOUBLE_EQ(OverlappedSeconds(steps), 5);
}

TEST_F(StepScheduleTest, AStepWaitsForTheCollectiveItReads) {
  // y (5) then its all-reduce (2); the gather (3) hides under y; z (4)
  // waits for both.
  std::vector<TimedStep> steps = {Step("gathered", 3), Step("y", 5), Step("summed", 2), Step("z", 4)};
  EXPECT_DOUBLE_EQ(OverlappedSeconds(steps), 11);
}

TEST_F(StepScheduleTest, CollectivesShareTheLinks) {
  // The all-reduce can only start once y is done and the gather has left
  // the links.
  std::vector<TimedStep> steps = {Step("gathered", 7), Step("y", 5), Step("summed", 2), Step("z", 4)};
  EXPECT_DOUBLE_EQ(OverlappedSeconds(steps), 13);
}

TEST_F(StepScheduleTest, ComputeThatDoesNotReadACollectiveRunsBeforeAStepThatWaitsForIt) {
  // Program order y, summed, z, v: z waits for the all-reduce (5..7) and
  // the gather (0..3); v does not, so it runs 5..9 and z 9..13 instead of
  // z 7..11 and v 11..15.
  std::vector<TimedStep> steps = {Step("gathered", 3), Step("y", 5), Step("summed", 2), Step("z", 4), Step("v", 4)};
  EXPECT_DOUBLE_EQ(OverlappedSeconds(steps), 13);
}

TEST_F(StepScheduleTest, WithoutCollectivesStepsAddUp) {
  std::vector<TimedStep> steps = {Step("y", 5), Step("z", 4)};
  steps[1].on_links = false;
  EXPECT_DOUBLE_EQ(OverlappedSeconds(steps), 9);
}

}  // namespace
}  // namespace kiln::runtime::timing
