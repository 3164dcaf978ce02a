// Every ISA level's GEMM agrees with the baseline level's on the same inputs.
#include "runtime/kernels/gemm_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "runtime/kernels/random_test_values.h"

namespace kiln::runtime {
namespace {

// Runs `level`'s GEMM on a [batch, m, k] x [batch, k, n] product with both
// operands in each storage order and checks it against the baseline's.
template <typename T>
void ExpectLevelAgreesWithBaseline(IsaLevel level, int64_t batch, int64_t m, int64_t k, int64_t n) {
  const GemmKernels& baseline = *GemmKernelsFor(IsaLevel::kBaseline);
  const GemmKernels& kernels = *GemmKernelsFor(level);
  const std::vector<T> a = testing::RandomTestValues<T>(batch * m * k, 1), b = testing::RandomTestValues<T>(batch * k * n, 2);
  // Entries lie in [-1, 1] (floats; |re|, |im| for complex): a sum of k
  // products differs between summation orders by at most ~2 k eps k.
  double tolerance = 0;
  if constexpr (!std::is_integral_v<T>) {
    using Real = decltype(std::abs(T{}));
    tolerance = 4.0 * k * k * std::numeric_limits<Real>::epsilon();
  }
  for (bool a_transposed : {false, true}) {
    for (bool b_transposed : {false, true}) {
      std::vector<T> want(batch * m * n), got(batch * m * n, T(7));
      for (int64_t i = 0; i < batch; ++i) {
        GemmView<T> va{a.data() + i * m * k, m, k, a_transposed};
        GemmView<T> vb{b.data() + i * k * n, k, n, b_transposed};
        baseline.For<T>()(va, vb, {want.data() + i * m * n, m, n});
        kernels.For<T>()(va, vb, {got.data() + i * m * n, m, n});
      }
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        if constexpr (std::is_integral_v<T>) {
          worst = std::max(worst, want[i] == got[i] ? 0.0 : 1.0);
        } else {
          worst = std::max(worst, static_cast<double>(std::abs(want[i] - got[i])));
        }
      }
      EXPECT_LE(worst, tolerance) << IsaLevelName(level) << " a_transposed=" << a_transposed
                                  << " b_transposed=" << b_transposed;
    }
  }
}

class GemmKernelsTest : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!IsaLevelRunnable(GetParam())) {
      GTEST_SKIP() << IsaLevelName(GetParam()) << " is not built or this CPU does not run it";
    }
  }
};

// Odd sizes reach every vector tail and Eigen's blocking edges.
TEST_P(GemmKernelsTest, F32AgreesWithBaseline) {
  ExpectLevelAgreesWithBaseline<float>(GetParam(), 2, 37, 129, 53);
  ExpectLevelAgreesWithBaseline<float>(GetParam(), 1, 300, 513, 70);
}

TEST_P(GemmKernelsTest, F64AgreesWithBaseline) {
  ExpectLevelAgreesWithBaseline<double>(GetParam(), 3, 17, 65, 31);
}

TEST_P(GemmKernelsTest, ComplexAgreesWithBaseline) {
  ExpectLevelAgreesWithBaseline<std::complex<float>>(GetParam(), 2, 19, 33, 23);
  ExpectLevelAgreesWithBaseline<std::complex<double>>(GetParam(), 1, 9, 40, 11);
}

TEST_P(GemmKernelsTest, IntegersAreExact) {
  ExpectLevelAgreesWithBaseline<int64_t>(GetParam(), 2, 13, 21, 9);
  ExpectLevelAgreesWithBaseline<uint64_t>(GetParam(), 1, 7, 30, 5);
}

TEST_P(GemmKernelsTest, EmptyContractionWritesZeros) {
  const GemmKernels& kernels = *GemmKernelsFor(GetParam());
  std::vector<float> c(6, 7.0f);
  kernels.f32({nullptr, 2, 0, false}, {nullptr, 0, 3, false}, {c.data(), 2, 3});
  EXPECT_EQ(c, std::vector<float>(6, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Levels, GemmKernelsTest, ::testing::ValuesIn(kAllIsaLevels),
                         [](const auto& info) { return std::string(IsaLevelName(info.param)); });

}  // namespace
}  // namespace kiln::runtime
