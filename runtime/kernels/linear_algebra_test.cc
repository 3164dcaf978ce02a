// cholesky and triangular-solve.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "runtime/kernels/element_access.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::RunRoot;

void ExpectAllNear(const hlo::Literal& got, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size())) << got.ToString();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(GetElementAs<double>(got, i), want[i], tol) << i << ": " << got.ToString();
  }
}

TEST(CholeskyTest, LowerFactorReadsOnlyTheLowerTriangle) {
  // a = L L^T with L = {{2,0,0},{1,3,0},{-1,2,4}}; the upper triangle holds junk.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f64[3,3] parameter(0)
  ROOT l = f64[3,3] cholesky(a), lower=true
})",
                   {"f64[3,3] {{4, 99, 99}, {2, 10, 99}, {-2, 5, 21}}"});
  ASSERT_TRUE(r) << r.error().message;
  ExpectAllNear(*r, {2, 0, 0, 1, 3, 0, -1, 2, 4});
}

TEST(CholeskyTest, UpperFactorOfABatch) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[2,2,2] parameter(0)
  ROOT u = f32[2,2,2] cholesky(a), lower=false
})",
                   {"f32[2,2,2] {{{4, 2}, {-7, 10}}, {{9, 0}, {0, 1}}}"});
  ASSERT_TRUE(r) << r.error().message;
  ExpectAllNear(*r, {2, 1, 0, 3, 3, 0, 0, 1});
}

TEST(CholeskyTest, NotPositiveDefiniteGivesNan) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT l = f32[2,2] cholesky(a), lower=true
})",
                   {"f32[2,2] {{1, 0}, {2, 1}}"});
  ASSERT_TRUE(r) << r.error().message;
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(GetElementAs<double>(*r, i))) << i;
}

TEST(CholeskyTest, ComplexHermitian) {
  // a = L L^H with L = {{2,0},{(1,1),1}}.
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  a = c64[2,2] parameter(0)
  ROOT l = c64[2,2] cholesky(a), lower=true
})",
                   {"c64[2,2] {{(4,0), (0,0)}, {(2,2), (3,0)}}"});
  ASSERT_TRUE(r) << r.error().message;
  const std::vector<std::complex<double>> want = {{2, 0}, {0, 0}, {1, 1}, {1, 0}};
  for (size_t i = 0; i < want.size(); ++i) {
    auto v = GetElementAs<std::complex<double>>(*r, i);
    EXPECT_NEAR(std::abs(v - want[i]), 0, 1e-5) << i;
  }
}

const char* kSolveModule = R"(
HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[%s] parameter(1)
  ROOT x = f32[%s] triangular-solve(a, b), %s
})";

Result<hlo::Literal> Solve(const char* b_dims, const char* attributes, const char* a,
                           const char* b) {
  char text[512];
  std::snprintf(text, sizeof(text), kSolveModule, b_dims, b_dims, attributes);
  return RunRoot(text, {a, std::string("f32[") + b_dims + "] " + b});
}

// a's lower triangle is L = {{2,0},{1,4}}; its upper entry is junk.
constexpr const char* kA = "f32[2,2] {{2, 77}, {1, 4}}";

TEST(TriangularSolveTest, LeftLower) {
  // L x = b with b = L * {{1,2},{3,4}}.
  auto r = Solve("2,2", "left_side=true, lower=true, transpose_a=NO_TRANSPOSE", kA,
                 "{{2, 4}, {13, 18}}");
  ASSERT_TRUE(r) << r.error().message;
  ExpectAllNear(*r, {1, 2, 3, 4});
}

TEST(TriangularSolveTest, LeftLowerTransposed) {
  // L^T x = b with L^T = {{2,1},{0,4}} and x = {{1,2},{3,4}}.
  auto r =
      Solve("2,2", "left_side=true, lower=true, transpose_a=TRANSPOSE", kA, "{{5, 8}, {12, 16}}");
  ASSERT_TRUE(r) << r.error().message;
  ExpectAllNear(*r, {1, 2, 3, 4});
}

TEST(TriangularSolveTest, RightLowerUnitDiagonal) {
  // x U = b where U is L with ones on the diagonal: {{1,0},{1,1}};
  // x = {{1,2},{3,4}} gives b = {{3,2},{7,4}}.
  auto r = Solve("2,2", "left_side=false, lower=true, unit_diagonal=true", kA, "{{3, 2}, {7, 4}}");
  ASSERT_TRUE(r) << r.error().message;
  ExpectAllNear(*r, {1, 2, 3, 4});
}

TEST(TriangularSolveTest, RejectsMismatchedShapes) {
  auto r = Solve("3,2", "left_side=true, lower=true", kA, "{{1, 2}, {3, 4}, {5, 6}}");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not fit b"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
