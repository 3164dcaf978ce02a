// The vector reduce loops: which shapes they take, that they compute what
// a fold in element order computes (exactly where the order is the same,
// within rounding where lanes reorder a float sum), and that the result
// does not depend on the number of cores.
#include "runtime/kernels/fast_reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/host_cores_testing.h"
#include "runtime/kernels/random_test_values.h"

namespace kiln::runtime {
namespace {

TEST(ContiguousReduceGeometryTest, OneRunOfReducedDimensions) {
  ReduceGeometry g;
  ASSERT_TRUE(ContiguousReduceGeometry(std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{2, 1}, g));
  EXPECT_EQ(g.outer, 2);
  EXPECT_EQ(g.reduced, 12);
  EXPECT_EQ(g.inner, 5);
  // Size-1 dimensions do not break a run, reduced or kept.
  ASSERT_TRUE(ContiguousReduceGeometry(std::vector<int64_t>{4, 1, 6, 1, 7}, std::vector<int64_t>{0, 2}, g));
  EXPECT_EQ(g.outer, 1);
  EXPECT_EQ(g.reduced, 24);
  EXPECT_EQ(g.inner, 7);
  // Nothing reduced: every element folds with init alone.
  ASSERT_TRUE(ContiguousReduceGeometry(std::vector<int64_t>{3, 4}, std::vector<int64_t>{}, g));
  EXPECT_EQ(g.outer, 12);
  EXPECT_EQ(g.reduced, 1);
  EXPECT_EQ(g.inner, 1);
  EXPECT_FALSE(ContiguousReduceGeometry(std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{0, 2}, g));
}

// The fold in element order: what the walker computes.
template <typename T>
std::vector<T> InOrder(ReducerKind kind, const ReduceGeometry& g, const std::vector<T>& in, T init) {
  std::vector<T> out(g.outer * g.inner, init);
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t r = 0; r < g.reduced; ++r) {
      for (int64_t i = 0; i < g.inner; ++i) {
        T& a = out[o * g.inner + i];
        a = ApplyReducer<T>(kind, a, in[(o * g.reduced + r) * g.inner + i]);
      }
    }
  }
  return out;
}

template <typename T>
void ExpectMatchesInOrder(ReducerKind kind, ReduceGeometry g, T init, bool exact) {
  const std::vector<T> in = testing::RandomTestValues<T>(g.outer * g.reduced * g.inner, 7);
  std::vector<T> got(g.outer * g.inner, T(99));
  ASSERT_TRUE(ReduceContiguous<T>(kind, g, in.data(), init, got.data()));
  const std::vector<T> want = InOrder(kind, g, in, init);
  for (size_t i = 0; i < want.size(); ++i) {
    if (exact) {
      ASSERT_EQ(got[i], want[i]) << i << " of " << g.outer << "x" << g.reduced << "x" << g.inner;
    } else {
      ASSERT_NEAR(got[i], want[i], 1e-4 * std::sqrt(static_cast<double>(g.reduced)) + 1e-5)
          << i << " of " << g.outer << "x" << g.reduced << "x" << g.inner;
    }
  }
}

TEST(ReduceContiguousTest, ColumnsFoldInElementOrderExactly) {
  // With inner dimensions every output folds its column in order: a float
  // sum is bit for bit the walker's, in one part and in several.
  ExpectMatchesInOrder<float>(ReducerKind::kAdd, {3, 50, 17}, 0.5f, true);
  ExpectMatchesInOrder<float>(ReducerKind::kAdd, {400, 300, 129}, 0.25f, true);  // parts of outer slices
  ExpectMatchesInOrder<double>(ReducerKind::kMultiply, {2, 9, 70}, 1.0, true);
  ExpectMatchesInOrder<int64_t>(ReducerKind::kAdd, {5, 33, 9}, int64_t{3}, true);
}

TEST(ReduceContiguousTest, LongColumnsFoldInBlocksWithinRounding) {
  // 3000 rows of 1000: blocks of 1049 rows, in parts.
  ExpectMatchesInOrder<float>(ReducerKind::kAdd, {2, 3000, 1000}, 1.5f, false);
  ExpectMatchesInOrder<float>(ReducerKind::kMaximum, {1, 5000, 700}, -std::numeric_limits<float>::infinity(), true);
  ExpectMatchesInOrder<int64_t>(ReducerKind::kAdd, {1, 5000, 700}, int64_t{9}, true);
}

TEST(ReduceContiguousTest, RowsFoldInLanesWithinRounding) {
  ExpectMatchesInOrder<float>(ReducerKind::kAdd, {7, 1000, 1}, 1.0f, false);
  ExpectMatchesInOrder<float>(ReducerKind::kAdd, {1, (int64_t{1} << 20) * 2 + 333, 1}, 0.0f, false);
  ExpectMatchesInOrder<double>(ReducerKind::kAdd, {3000, 500, 1}, 0.0, false);
  // Order does not matter to these: exact.
  ExpectMatchesInOrder<float>(ReducerKind::kMaximum, {9, 777, 1}, -std::numeric_limits<float>::infinity(), true);
  ExpectMatchesInOrder<float>(ReducerKind::kMinimum, {9, 777, 1}, std::numeric_limits<float>::infinity(), true);
  ExpectMatchesInOrder<int64_t>(ReducerKind::kAdd, {4, 5000, 1}, int64_t{-2}, true);
  ExpectMatchesInOrder<int64_t>(ReducerKind::kMaximum, {4, 5000, 1}, std::numeric_limits<int64_t>::lowest(), true);
  ExpectMatchesInOrder<uint64_t>(ReducerKind::kOr, {4, 5000, 1}, uint64_t{0}, true);
  ExpectMatchesInOrder<uint64_t>(ReducerKind::kAnd, {4, 5000, 1}, ~uint64_t{0}, true);
}

TEST(ReduceContiguousTest, InitFoldsOnceAndSignsAndNansSurvive) {
  // Lanes start from the identity, so init is counted once however many lanes.
  std::vector<float> ones(1000, 1.0f);
  float out = 0;
  ASSERT_TRUE(ReduceContiguous<float>(ReducerKind::kAdd, {1, 1000, 1}, ones.data(), 5.0f, &out));
  EXPECT_EQ(out, 1005.0f);
  std::vector<float> zeros(500, -0.0f);
  ASSERT_TRUE(ReduceContiguous<float>(ReducerKind::kAdd, {1, 500, 1}, zeros.data(), -0.0f, &out));
  EXPECT_TRUE(std::signbit(out)) << "a sum of negative zeros is -0";
  std::vector<float> with_nan(300, 1.0f);
  with_nan[250] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(ReduceContiguous<float>(ReducerKind::kMaximum, {1, 300, 1}, with_nan.data(), 0.0f, &out));
  EXPECT_TRUE(std::isnan(out));
}

TEST(ReduceContiguousTest, RefusesReducersItDoesNotDefine) {
  float in[4] = {1, 2, 3, 4}, out = 0;
  EXPECT_FALSE(ReduceContiguous<float>(ReducerKind::kGeneral, {1, 4, 1}, in, 0.0f, &out));
  EXPECT_FALSE(ReduceContiguous<float>(ReducerKind::kAnd, {1, 4, 1}, in, 0.0f, &out));
  EXPECT_FALSE(ReduceContiguous<float>(ReducerKind::kAssign, {1, 4, 1}, in, 0.0f, &out));
}

// A long row (several blocks) and many rows: the same bits with idle cores
// lent and with every core held.
TEST(ReduceContiguousTest, TheResultDoesNotDependOnHowManyCoresRanIt) {
  for (ReduceGeometry g : {ReduceGeometry{1, (int64_t{1} << 20) * 3 + 5, 1}, ReduceGeometry{4000, 700, 1},
                           ReduceGeometry{1, 2000, 3000}}) {
    const std::vector<float> in = testing::RandomTestValues<float>(g.outer * g.reduced * g.inner, 11);
    std::vector<float> spread(g.outer * g.inner), alone(g.outer * g.inner);
    ASSERT_TRUE(ReduceContiguous<float>(ReducerKind::kAdd, g, in.data(), 0.0f, spread.data()));
    {
      kiln::testing::AllHostCoresHeld held;
      ASSERT_TRUE(ReduceContiguous<float>(ReducerKind::kAdd, g, in.data(), 0.0f, alone.data()));
    }
    EXPECT_EQ(spread, alone) << g.outer << "x" << g.reduced << "x" << g.inner;
  }
}

}  // namespace
}  // namespace kiln::runtime
