#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/address_line.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner.h"
#include "compiler/passes/pass_test_util.h"

namespace kiln::buffers {
namespace {

using fusion::PlanComputation;
using fusion::PlanKind;
using fusion::PlannerOptions;
using passes::testing::ParseVerified;

// A chain of `length` elementwise ops over f32[1024,1024] (4 MiB each).
std::string Chain(int length) {
  std::string text = "HloModule chain\nENTRY e {\n  v0 = f32[1024,1024] parameter(0)\n";
  for (int i = 1; i <= length; ++i) {
    text += std::string(i == length ? "  ROOT " : "  ") + "v" + std::to_string(i) +
            " = f32[1024,1024] " + (i % 2 ? "negate" : "exponential") + "(v" +
            std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

TEST(BufferAssignmentTest, LongChainReusesBuffers) {
  auto module = ParseVerified(Chain(64));
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->kernels.size(), 64u);
  auto buffers = AssignBuffers(*module->entry(), *plan, int64_t{16} << 30, "v5e");
  ASSERT_TRUE(buffers.has_value()) << buffers.error().message;
  constexpr int64_t kBuffer = 4 << 20;
  EXPECT_EQ(buffers->sum_buffer_bytes, 65 * kBuffer);
  // Parameter + two alternating slots.
  EXPECT_EQ(buffers->slot_count, 2);
  EXPECT_EQ(buffers->peak_bytes, 3 * kBuffer);
  EXPECT_LT(buffers->peak_bytes * 10, buffers->sum_buffer_bytes);
  // Consecutive kernels never share a slot; the output lives to the end.
  const auto& b = buffers->buffers;
  for (size_t i = 2; i < b.size(); ++i) EXPECT_NE(b[i].slot, b[i - 1].slot);
  EXPECT_EQ(b.back().kind, Buffer::Kind::kOutput);
  EXPECT_EQ(b.back().last_use, 64);
}

TEST(BufferAssignmentTest, ValuesReadLaterStayLive) {
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] negate(x)
  b = f32[1024] exponential(a)
  c = f32[1024] exponential(b)
  ROOT d = f32[1024] add(c, a)
})");
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  auto buffers = AssignBuffers(*module->entry(), *plan, int64_t{1} << 30, "v5e");
  ASSERT_TRUE(buffers.has_value());
  const Buffer& a = buffers->buffers[buffers->buffer_of[1]];
  const Buffer& b = buffers->buffers[buffers->buffer_of[2]];
  const Buffer& c = buffers->buffers[buffers->buffer_of[3]];
  EXPECT_EQ(a.last_use, 3);  // read by d, the fourth kernel
  EXPECT_NE(a.slot, b.slot);
  EXPECT_NE(a.slot, c.slot);
  EXPECT_EQ(b.last_use, 2);
}

TEST(BufferAssignmentTest, ProgramsLargerThanHbmFailWithTheReason) {
  auto module = ParseVerified(Chain(4));
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  auto buffers = AssignBuffers(*module->entry(), *plan, 8 << 20, "tiny");
  ASSERT_FALSE(buffers.has_value());
  EXPECT_EQ(buffers.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(buffers.error().message,
            "program needs 12.0 MiB of HBM at peak (parameters 4.0 MiB, constants 0 B, "
            "temporaries 8.0 MiB, at most 12.0 MiB live at once, the largest then %v1 4.0 MiB, %v2 4.0 MiB); "
            "chip tiny has 8.0 MiB");
}

TEST(BufferAssignmentTest, ProgramsLargerThanHbmNameTheSmallestTargetThatHoldsThem) {
  auto module = ParseVerified(Chain(4));
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  // 12 MiB at peak: "small" is too small, "large" and "larger" hold it.
  const std::vector<HbmAlternative> alternatives = {
      {"larger", 64 << 20}, {"small", 10 << 20}, {"large", 16 << 20}};
  auto buffers = AssignBuffers(*module->entry(), *plan, 8 << 20, "tiny", {}, alternatives);
  ASSERT_FALSE(buffers.has_value());
  EXPECT_EQ(buffers.error().code, ErrorCode::kResourceExhausted);
  EXPECT_TRUE(buffers.error().message.ends_with("chip tiny has 8.0 MiB; it fits on large (16.0 MiB)"))
      << buffers.error().message;

  // None holds it: the error names the one with the most.
  const std::vector<HbmAlternative> too_small = {{"small", 10 << 20}, {"smaller", 9 << 20}};
  buffers = AssignBuffers(*module->entry(), *plan, 8 << 20, "tiny", {}, too_small);
  ASSERT_FALSE(buffers.has_value());
  EXPECT_TRUE(buffers.error().message.ends_with(
      "chip tiny has 8.0 MiB; no chip kind holds it: the most HBM is small's 10.0 MiB"))
      << buffers.error().message;

  // The chip with the most HBM of all (TPU7x): the error does not point at
  // a smaller one (a probe saw "the most HBM is v5p's 95.0 GiB" on TPU7x).
  buffers = AssignBuffers(*module->entry(), *plan, 10 << 20, "biggest", {}, too_small);
  ASSERT_FALSE(buffers.has_value());
  EXPECT_TRUE(buffers.error().message.ends_with("no chip kind holds it: this one has the most HBM of any"))
      << buffers.error().message;

  // A program that fits is unaffected by the alternatives.
  EXPECT_TRUE(AssignBuffers(*module->entry(), *plan, 64 << 20, "roomy", {}, too_small).has_value());
}

TEST(BufferAssignmentTest, ProgramsBeyondInt64BytesReportTheTrueSize) {
  // 10^12 x 10^9 f32 is 4*10^21 bytes: int64 counts saturate near 8 EiB.
  auto module = ParseVerified(R"(HloModule huge
ENTRY e {
  p = f32[] parameter(0)
  ROOT b = f32[1000000000000,1000000000] broadcast(p), dimensions={}
})");
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  auto buffers = AssignBuffers(*module->entry(), *plan, int64_t{16} << 30, "v5e");
  ASSERT_FALSE(buffers.has_value());
  EXPECT_EQ(buffers.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(buffers.error().message,
            "program needs more than 8.0 EiB of HBM at peak: its largest buffer, %b "
            "(f32[1000000000000,1000000000]), alone takes 3.4 ZiB; chip v5e has 16.0 GiB");
}

TEST(BufferAssignmentTest, AFreedBlockServesALaterBufferOfAnotherSize) {
  // a (4 MiB) dies after b; c (2 MiB) and d (2 MiB) then fit in a's place,
  // so the temporaries area stays at a + b.
  auto module = ParseVerified(R"(
HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  a = f32[1024,1024] negate(x)
  b = f32[1024,1024] exponential(a)
  c = f32[512,1024] slice(b), slice={[0:512], [0:1024]}
  d = f32[512,1024] negate(c)
  ROOT r = f32[512,1024] add(c, d)
})");
  ASSERT_NE(module, nullptr);
  auto plan = PlanComputation(*module->entry(), PlanKind::kNone, PlannerOptions{});
  ASSERT_TRUE(plan.has_value());
  auto buffers = AssignBuffers(*module->entry(), *plan, int64_t{1} << 30, "v5e");
  ASSERT_TRUE(buffers.has_value()) << buffers.error().message;
  EXPECT_EQ(buffers->slot_bytes, 2 * (4 << 20)) << "c, d and r reuse the blocks a and b freed";
}

TEST(AddressLineTest, BestFitSplitsAndMergesBlocks) {
  AddressLine line;
  const int64_t a = line.Allocate(1000), b = line.Allocate(3000), c = line.Allocate(512);
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1024);
  EXPECT_EQ(c, 1024 + 3072);
  line.Free(b, 3000);
  EXPECT_EQ(line.Allocate(600), 1024);         // best fit: the freed 3 KiB block, split
  line.Free(a, 1000);                          // [0, 1024) free, [1024, 2048) used
  line.Free(1024, 600);                        // merges with [0, 1024) and [2048, 4096)
  EXPECT_EQ(line.Allocate(4096), 0);           // the merged 4 KiB
  EXPECT_EQ(line.end(), 1024 + 3072 + 512);
  line.Free(c, 512);
  EXPECT_EQ(line.Allocate(2048), 4096);        // grows from the free block at the end
  EXPECT_EQ(line.end(), 4096 + 2048);
}

}  // namespace
}  // namespace kiln::buffers
