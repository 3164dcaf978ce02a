#include "base/units.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(UnitsTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("256MiB"), uint64_t{256} << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1'000'000'000u);
  EXPECT_EQ(*ParseByteSize("64kib"), 65536u);
  EXPECT_EQ(*ParseByteSize("17"), 17u);
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_FALSE(ParseByteSize(""));
  EXPECT_FALSE(ParseByteSize("MiB"));
  Result<uint64_t> unknown = ParseByteSize("3 parsecs");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("3 parsecs"), std::string::npos);
  EXPECT_FALSE(ParseByteSize("99999999999TiB")) << "overflow";
}

TEST(UnitsTest, Durations) {
  EXPECT_EQ(*ParseDuration("60s"), std::chrono::seconds(60));
  EXPECT_EQ(*ParseDuration("60"), std::chrono::seconds(60));
  EXPECT_EQ(*ParseDuration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*ParseDuration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(*ParseDuration("2m"), std::chrono::minutes(2));
  EXPECT_EQ(*ParseDuration("1H"), std::chrono::hours(1));
  EXPECT_EQ(*ParseDuration("0.1ms"), std::chrono::milliseconds(1)) << "at least a millisecond";
  for (const char* bad : {"", "0", "0s", "-5s", "5 s", "5x", "s", "25h", "1e3", "1..2s"}) {
    Result<std::chrono::milliseconds> refused = ParseDuration(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("'" + std::string(bad) + "'"), std::string::npos) << refused.error().message;
  }
}

TEST(UnitsTest, DescribesDurations) {
  EXPECT_EQ(DescribeDuration(std::chrono::milliseconds(250)), "250 ms");
  EXPECT_EQ(DescribeDuration(std::chrono::milliseconds(1000)), "1 s");
  EXPECT_EQ(DescribeDuration(std::chrono::milliseconds(1500)), "1.5 s");
  EXPECT_EQ(DescribeDuration(std::chrono::milliseconds(60'000)), "60 s");
}

TEST(UnitsTest, DescribesBytes) {
  EXPECT_EQ(DescribeBytes(12), "12 bytes");
  EXPECT_EQ(DescribeBytes(uint64_t{512} << 20), "512.0 MiB");
  EXPECT_EQ(DescribeBytes(uint64_t{20} << 30), "20.0 GiB");
}

TEST(UnitsTest, UnsignedNumbersNameWhatTheyAre) {
  EXPECT_EQ(*ParseUnsigned("8470", 65535, "port"), 8470u);
  Result<uint64_t> big = ParseUnsigned("70000", 65535, "port");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("port"), std::string::npos);
  EXPECT_FALSE(ParseUnsigned("", 10, "n"));
  EXPECT_FALSE(ParseUnsigned("1x", 10, "n"));
  EXPECT_TRUE(EqualsIgnoreCase("MiB", "mib"));
  EXPECT_FALSE(EqualsIgnoreCase("MiB", "mi"));
}

}  // namespace
}  // namespace kiln
