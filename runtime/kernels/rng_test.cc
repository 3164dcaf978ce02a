#include <set>

#include <gtest/gtest.h>

#include "runtime/kernels/counter_rng.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::RunRoot;
using testing::ScalarTestContext;

// Known-answer vectors of the Random123 reference implementation.
TEST(CounterRngTest, PhiloxKnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(CounterRngTest, ThreeFryKnownAnswers) {
  EXPECT_EQ(ThreeFry2x32({0, 0}, {0, 0}), (std::array<uint32_t, 2>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(ThreeFry2x32({0x243f6a88, 0x85a308d3}, {0x13198a2e, 0x03707344}),
            (std::array<uint32_t, 2>{0xc4923a9c, 0x483df7a0}));
}

TEST(RngBitGeneratorTest, PhiloxFillsBitsAndAdvancesState) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[6]) rng-bit-generator(s), algorithm=rng_philox
})", {"u64[2] {0, 0}"});
  ASSERT_TRUE(r) << r.error().message;
  const hlo::Literal& bits = r->tuple_elements()[1];
  // The first block is Philox4x32(counter 0, key 0).
  EXPECT_EQ(bits.Get<uint32_t>(0), 0x6627e8d5u);
  EXPECT_EQ(bits.Get<uint32_t>(3), 0x9b00dbd8u);
  EXPECT_EQ(r->tuple_elements()[0].Get<uint64_t>(1), 2u);  // two blocks drawn
}

TEST(RngBitGeneratorTest, ThreeFryIsDeterministicAndStateDependent) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u64[3]) rng-bit-generator(s), algorithm=rng_three_fry
})";
  auto a = RunRoot(kText, {"u64[2] {7, 0}"});
  auto b = RunRoot(kText, {"u64[2] {7, 0}"});
  auto c = RunRoot(kText, {"u64[2] {7, 3}"});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->tuple_elements()[0].Get<uint64_t>(1), 3u);
  // Starting 3 blocks later continues the same stream.
  EXPECT_NE(a->tuple_elements()[1], c->tuple_elements()[1]);
}

TEST(RngTest, UniformStaysInRange) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[1000] rng(a, b), distribution=rng_uniform
})", {"f32[] 2", "f32[] 3"});
  ASSERT_TRUE(r) << r.error().message;
  double sum = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const float v = r->Get<float>(i);
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 3.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 2.5, 0.05);

  auto ints = RunRoot(R"(
HloModule m
ENTRY e {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[500] rng(a, b), distribution=rng_uniform
})", {"s32[] -3", "s32[] 2"});
  ASSERT_TRUE(ints) << ints.error().message;
  std::set<int32_t> seen;
  for (int64_t i = 0; i < 500; ++i) seen.insert(ints->Get<int32_t>(i));
  EXPECT_EQ(seen, (std::set<int32_t>{-3, -2, -1, 0, 1}));
}

TEST(RngTest, NormalHasRequestedMoments) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[4000] rng(a, b), distribution=rng_normal
})", {"f32[] 5", "f32[] 2"});
  ASSERT_TRUE(r) << r.error().message;
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    sum += r->Get<float>(i);
    sq += double(r->Get<float>(i)) * r->Get<float>(i);
  }
  const double mean = sum / 4000, var = sq / 4000 - mean * mean;
  EXPECT_NEAR(mean, 5.0, 0.15);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.15);
}

}  // namespace
}  // namespace kiln::runtime
