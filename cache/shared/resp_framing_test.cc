#include "cache/shared/resp_framing.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::cache::shared {
namespace {

TEST(RespFramingTest, WellFramedRepliesPass) {
  EXPECT_TRUE(CheckRespFraming(":1\r\n*3\r\n$5\r\nhello\r\n*2\r\n+OK\r\n-ERR no\r\n$-1\r\n", 2));
  EXPECT_TRUE(CheckRespFraming("$0\r\n\r\n*0\r\n*-1\r\n", 3));
  EXPECT_TRUE(CheckRespFraming(std::string("$4\r\na\r\nb\r\n"), 1)) << "CRLF inside a payload is data";
}

TEST(RespFramingTest, ABulkStringWithoutItsCrlfIsRefused) {
  // What hiredis 0.14 reads as "abc", taking "de" for the CRLF.
  Status status = CheckRespFraming("$3\r\nabcde\r\n", 1);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("3 bytes is not followed by CRLF"), std::string::npos) << status.error();
  EXPECT_NE(status.error().message.find("byte 7"), std::string::npos) << status.error();
}

TEST(RespFramingTest, ShortExtraAndBadlyCountedRepliesAreRefused) {
  for (auto [bytes, count] : {std::pair<std::string_view, size_t>{":1\r\n", 2}, {":1\r\n:2\r\n", 1},
                              {"$10\r\nabc\r\n", 1}, {"$x\r\nabc\r\n", 1}, {"$-2\r\n", 1}, {"*2\r\n:1\r\n", 1},
                              {"?what\r\n", 1}, {":1\n", 1}, {"$3\r\nabc", 1}}) {
    EXPECT_FALSE(CheckRespFraming(bytes, count)) << "'" << bytes << "' as " << count;
  }
}

TEST(RespFramingTest, AStreamIsCutIntoWholeValuesAndAPartOneWaits) {
  auto length = RespValueLength("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n:1\r\n");
  ASSERT_TRUE(length);
  ASSERT_TRUE(*length);
  EXPECT_EQ(**length, 32u) << "the first value alone";
  for (std::string_view part : {"", "*3\r\n$7\r\nmess", "$3\r\nabc", "$3\r\nabc\r", "+OK"}) {
    length = RespValueLength(part);
    ASSERT_TRUE(length) << part;
    EXPECT_FALSE(*length) << "'" << part << "' is not whole yet";
  }
  EXPECT_FALSE(RespValueLength("$3\r\nabcde\r\n")) << "a bulk string without its CRLF is refused, not awaited";
  EXPECT_FALSE(RespValueLength("?x\r\n"));
}

TEST(RespFramingTest, NestingPastTheLimitIsRefused) {
  std::string deep;
  for (int i = 0; i <= kMaxRespDepth + 1; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  EXPECT_FALSE(CheckRespFraming(deep, 1));
  std::string within;
  for (int i = 0; i < kMaxRespDepth; ++i) within += "*1\r\n";
  within += ":1\r\n";
  EXPECT_TRUE(CheckRespFraming(within, 1));
}

}  // namespace
}  // namespace kiln::cache::shared
