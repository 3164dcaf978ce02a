#include "base/str_cat.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace kiln {
namespace {

TEST(StrCatTest, JoinsStringsCharactersAndNumbers) {
  const std::string name = "dot";
  EXPECT_EQ(StrCat("kernel ", 3, " (", name, ')', ": ", std::string_view("x")), "kernel 3 (dot): x");
  EXPECT_EQ(StrCat(int64_t{-9000000000}, " ", uint8_t{7}), "-9000000000 7");
  EXPECT_EQ(StrCat(), "");
}

TEST(StrCatTest, FloatingPointReadsBackExactly) {
  EXPECT_EQ(StrCat(0.1), "0.1");
  EXPECT_EQ(StrCat(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(StrCat(2.5f), "2.5");
  EXPECT_EQ(std::stod(StrCat(1e-300 / 7)), 1e-300 / 7);
}

TEST(StrCatTest, FixedAndSignificantDigits) {
  EXPECT_EQ(FixedDecimal(0.2144, 3), "0.214");
  EXPECT_EQ(FixedDecimal(12, 1), "12.0");
  EXPECT_EQ(SignificantDigits(1.0 / 3), "0.333333");
  EXPECT_EQ(SignificantDigits(1e20), "1e+20");
  EXPECT_EQ(SignificantDigits(123456.0, 3), "1.23e+05");
}

}  // namespace
}  // namespace kiln
