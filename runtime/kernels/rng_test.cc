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

// Expected bits below are derived from the Random123 known answers above
// through the layout of XLA's rng-bit-generator expansion.

hlo::Literal BitsOf(const Result<hlo::Literal>& r) { return r->tuple_elements()[1]; }
hlo::Literal StateOf(const Result<hlo::Literal>& r) { return r->tuple_elements()[0]; }

TEST(RngBitGeneratorTest, PhiloxWordsGoRoundRobinOverBlocks) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[3] parameter(0)
  ROOT r = (u64[3], u32[6]) rng-bit-generator(s), algorithm=rng_philox
})", {"u64[3] {0, 0, 0}"});
  ASSERT_TRUE(r) << r.error().message;
  // Element i is word i % 4 of block i / 4; block 0 is Philox(counter 0, key 0).
  const auto block0 = Philox4x32({0, 0, 0, 0}, {0, 0});
  const auto block1 = Philox4x32({1, 0, 0, 0}, {0, 0});
  const hlo::Literal bits = BitsOf(r);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bits.Get<uint32_t>(i), block0[i]) << i;
  EXPECT_EQ(bits.Get<uint32_t>(4), block1[0]);
  EXPECT_EQ(bits.Get<uint32_t>(5), block1[1]);
  EXPECT_EQ(StateOf(r).ToString(), "u64[3] {0, 2, 0}");  // two blocks drawn
}

TEST(RngBitGeneratorTest, PhiloxTwoWordStateUsesTheKeyAsCounterHigh) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u64[3]) rng-bit-generator(s), algorithm=rng_philox
})", {"u64[2] {5, 7}"});
  ASSERT_TRUE(r) << r.error().message;
  // Counter (low 7, high 5), key 5; 64-bit element i is words (0,1) or (2,3)
  // of block i / 2.
  const auto block0 = Philox4x32({7, 0, 5, 0}, {5, 0});
  const auto block1 = Philox4x32({8, 0, 5, 0}, {5, 0});
  const hlo::Literal bits = BitsOf(r);
  EXPECT_EQ(bits.Get<uint64_t>(0), block0[0] | (uint64_t{block0[1]} << 32));
  EXPECT_EQ(bits.Get<uint64_t>(1), block0[2] | (uint64_t{block0[3]} << 32));
  EXPECT_EQ(bits.Get<uint64_t>(2), block1[0] | (uint64_t{block1[1]} << 32));
  EXPECT_EQ(StateOf(r).ToString(), "u64[2] {5, 9}");
}

TEST(RngBitGeneratorTest, ThreeFry64BitElementsTakeOneCounterEach) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u64[3]) rng-bit-generator(s), algorithm=rng_three_fry
})", {"u64[2] {0, 0}"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(BitsOf(r).Get<uint64_t>(0), 0x99ba4efe6b200159u);  // ThreeFry(0, key 0)
  const auto second = ThreeFry2x32({1, 0}, {0, 0});
  EXPECT_EQ(BitsOf(r).Get<uint64_t>(1), second[0] | (uint64_t{second[1]} << 32));
  EXPECT_EQ(StateOf(r).ToString(), "u64[2] {0, 3}");
}

TEST(RngBitGeneratorTest, ThreeFry32BitElementsSplitTheShapeInHalves) {
  // f32[3,2] is split along dimension 1 (the first even one): element (i, j)
  // is word j of ThreeFry(counter 10 + i). s16[3] has no even dimension and
  // splits along 0: element j is word j % 2 of counter j / 2.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[3,2]) rng-bit-generator(s), algorithm=rng_three_fry
})", {"u64[2] {9, 10}"});
  ASSERT_TRUE(r) << r.error().message;
  for (uint32_t i = 0; i < 3; ++i) {
    const auto words = ThreeFry2x32({10 + i, 0}, {9, 0});
    EXPECT_EQ(BitsOf(r).Get<uint32_t>(2 * i), words[0]) << i;
    EXPECT_EQ(BitsOf(r).Get<uint32_t>(2 * i + 1), words[1]) << i;
  }
  EXPECT_EQ(StateOf(r).ToString(), "u64[2] {9, 13}");

  auto narrow = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u16[3]) rng-bit-generator(s), algorithm=rng_three_fry
})", {"u64[2] {0, 0}"});
  ASSERT_TRUE(narrow) << narrow.error().message;
  const auto w0 = ThreeFry2x32({0, 0}, {0, 0});
  const auto w1 = ThreeFry2x32({1, 0}, {0, 0});
  EXPECT_EQ(BitsOf(narrow).Get<uint16_t>(0), static_cast<uint16_t>(w0[0]));
  EXPECT_EQ(BitsOf(narrow).Get<uint16_t>(1), static_cast<uint16_t>(w0[1]));
  EXPECT_EQ(BitsOf(narrow).Get<uint16_t>(2), static_cast<uint16_t>(w1[0]));
  EXPECT_EQ(StateOf(narrow).ToString(), "u64[2] {0, 2}");
}

TEST(RngBitGeneratorTest, RejectsAOneWordState) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  s = u64[1] parameter(0)
  ROOT r = (u64[1], u32[2]) rng-bit-generator(s), algorithm=rng_philox
})", {"u64[1] {0}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("at least two 64-bit words"), std::string::npos);
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
