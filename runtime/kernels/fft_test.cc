#include <complex>

#include <gtest/gtest.h>

#include "runtime/kernels/element_access.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

using testing::RunRoot;

void ExpectNear(const hlo::Literal& got, std::vector<std::complex<double>> want) {
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size())) << got.ToString();
  for (size_t i = 0; i < want.size(); ++i) {
    auto v = GetElementAs<std::complex<double>>(got, i);
    EXPECT_NEAR(v.real(), want[i].real(), 1e-5) << i << ": " << got.ToString();
    EXPECT_NEAR(v.imag(), want[i].imag(), 1e-5) << i << ": " << got.ToString();
  }
}

TEST(FftTest, ForwardLength4) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}
})", {"c64[4] {(1,0),(2,0),(3,0),(4,0)}"});
  ASSERT_TRUE(r) << r.error().message;
  ExpectNear(*r, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}});
}

TEST(FftTest, InverseIsNormalised) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = c128[4] parameter(0)
  ROOT f = c128[4] fft(x), fft_type=IFFT, fft_length={4}
})", {"c128[4] {(10,0),(-2,2),(-2,0),(-2,-2)}"});
  ASSERT_TRUE(r) << r.error().message;
  ExpectNear(*r, {{1, 0}, {2, 0}, {3, 0}, {4, 0}});
}

TEST(FftTest, RealRoundTripIn2D) {
  auto fwd = RunRoot(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT f = c64[2,2] fft(x), fft_type=RFFT, fft_length={2,3}
})", {"f32[2,3] {{1,2,3},{4,5,6}}"});
  ASSERT_TRUE(fwd) << fwd.error().message;
  // X[0,0] = 21, X[1,0] = (1+2+3)-(4+5+6) = -9, X[0,1] = -3+1.732i, X[1,1] = 0.
  const double s = std::sqrt(3.0);
  ExpectNear(*fwd, {{21, 0}, {-3, s}, {-9, 0}, {0, 0}});

  auto inv = RunRoot(R"(
HloModule m
ENTRY e {
  x = c64[2,2] parameter(0)
  ROOT f = f32[2,3] fft(x), fft_type=IRFFT, fft_length={2,3}
})", {"c64[2,2] " + fwd->ValueToString()});
  ASSERT_TRUE(inv) << inv.error().message;
  ExpectNear(*inv, {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}});
}

TEST(FftTest, LengthMismatchIsAnError) {
  auto r = RunRoot(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={8}
})", {"c64[4] {(1,0),(2,0),(3,0),(4,0)}"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("fft_length"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kiln::runtime
