#include "runtime/timing/step_traffic.h"

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "compiler/hlo/parser.h"
#include "runtime/timing/tpu_tiles.h"

namespace kiln::runtime::timing {
namespace {

constexpr double kMiB = 1 << 20;

// A scanned layer's body ops: each reads its operands once and writes its
// result once; broadcasts, slices and in-place updates move only what they
// touch.
constexpr std::string_view kBody = R"(HloModule steps
fused_slice {
  stack = f32[32,1024,256] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  w = f32[1,1024,256] dynamic-slice(stack, i, z, z), dynamic_slice_sizes={1,1024,256}
  r = f32[1024,256] reshape(w)
  ROOT n = f32[1024,256] negate(r)
}
fused_whole {
  a = f32[1024,256] parameter(0)
  ROOT e = f32[1024,256] exponential(a)
}
ENTRY e {
  x = f32[1024,256] parameter(0)
  stack = f32[32,1024,256] parameter(1)
  i = s32[] parameter(2)
  c = f32[] constant(2)
  cb = f32[1024,256] broadcast(c), dimensions={}
  scaled = f32[1024,256] multiply(x, cb)
  sum = f32[1024,256] add(x, scaled)
  z = s32[] constant(0)
  row = f32[1,1024,256] dynamic-slice(stack, i, z, z), dynamic_slice_sizes={1,1024,256}
  update = f32[1,1024,256] reshape(sum)
  put = f32[32,1024,256] dynamic-update-slice(stack, update, i, z, z)
  sliced = f32[1024,256] fusion(stack, i), kind=kLoop, calls=fused_slice
  whole = f32[1024,256] fusion(x), kind=kLoop, calls=fused_whole
  ROOT t = (f32[1024,256], f32[1,1024,256], f32[32,1024,256], f32[1024,256], f32[1024,256]) tuple(scaled, row, put, sliced, whole)
})";

class StepTrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto parsed = hlo::ParseModule(kBody);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    module_ = std::move(*parsed);
  }
  double Bytes(std::string_view name) {
    for (const auto& instr : module_->entry()->instructions()) {
      if (instr->name() == name) return StepTrafficBytes(*instr);
    }
    ADD_FAILURE() << name;
    return -1;
  }
  double ScalarBytes(hlo::PrimitiveType type) { return PaddedArrayBytes(hlo::Shape(type, {})); }

  std::unique_ptr<hlo::Module> module_;
};

TEST_F(StepTrafficTest, ElementwiseReadsOperandsAndWritesItsResult) {
  // x and the sum's other operand read, the result written: 1 MiB each.
  EXPECT_DOUBLE_EQ(Bytes("sum"), 3 * kMiB);
}

TEST_F(StepTrafficTest, BroadcastOperandIsReadAsItsSource) {
  EXPECT_DOUBLE_EQ(Bytes("scaled"), 2 * kMiB + ScalarBytes(hlo::PrimitiveType::kF32));
}

TEST_F(StepTrafficTest, SlicesAndInPlaceUpdatesMoveOnlyWhatTheyTouch) {
  const double indices = 3 * ScalarBytes(hlo::PrimitiveType::kS32);
  // Not the 32 MiB stack.
  EXPECT_DOUBLE_EQ(Bytes("row"), 2 * kMiB + indices);
  EXPECT_DOUBLE_EQ(Bytes("put"), 2 * kMiB + indices);
}

TEST_F(StepTrafficTest, FusionReadsItsOperandsAsItsComputationUsesThem) {
  // The stack is only sliced inside: one 1 MiB row read, the result written.
  EXPECT_DOUBLE_EQ(Bytes("sliced"), 2 * kMiB + ScalarBytes(hlo::PrimitiveType::kS32));
  EXPECT_DOUBLE_EQ(Bytes("whole"), 2 * kMiB);
}

}  // namespace
}  // namespace kiln::runtime::timing
