// RedisConnection against a peer that sends exactly the given bytes over a
// real socket (a hostile or broken Redis), and the fuzzers' crashers.
#include "cache/shared/redis_connection.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "fuzz/redis_reply_replay.h"
#include "fuzz/regression_inputs.h"

namespace kiln::cache::shared {
namespace {

// The replies to EXISTS + GET when the "server" answers `bytes` and hangs up.
Result<std::vector<RedisReply>> Answered(std::string_view bytes) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_EQ(write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  shutdown(fds[1], SHUT_WR);
  ConnectionOptions options;
  options.command_timeout = std::chrono::milliseconds(2000);
  auto connection = RedisConnection::FromSocket(fds[0], {"peer", 6379}, options);
  auto replies = connection->Pipeline({{"EXISTS", "k"}, {"GET", "k"}});
  close(fds[1]);
  return replies;
}

TEST(RedisConnectionTest, ReadsEveryKindOfReplyIntoValues) {
  auto replies = Answered(":1\r\n*3\r\n$5\r\nhello\r\n*2\r\n+OK\r\n-ERR no\r\n$-1\r\n");
  ASSERT_TRUE(replies) << replies.error().ToString();
  ASSERT_EQ(replies->size(), 2u);
  EXPECT_EQ((*replies)[0].integer, 1);
  const RedisReply& array = (*replies)[1];
  ASSERT_EQ(array.kind, RedisReply::Kind::kArray);
  ASSERT_EQ(array.elements.size(), 3u);
  EXPECT_EQ(array.elements[0].text, "hello");
  ASSERT_EQ(array.elements[1].elements.size(), 2u);
  EXPECT_TRUE(array.elements[1].elements[0].IsStatus("OK"));
  EXPECT_TRUE(array.elements[1].elements[1].IsError());
  EXPECT_TRUE(array.elements[2].IsNil());
}

TEST(RedisConnectionTest, AHugeArrayCountIsRefusedNotAllocated) {
  // Found by redis_reply_fuzzer: hiredis's own reply builder callocs the
  // announced count ("*2000010000") before any element arrives.
  const std::string crasher = fuzz::RegressionInput("redis_reply", "array-count-oom");
  for (std::string_view bytes : {std::string_view("*2000010000\r\n"), std::string_view(":1\r\n*70000\r\n"),
                                 std::string_view(crasher)}) {
    ASSERT_FALSE(bytes.empty());
    auto replies = Answered(bytes);
    ASSERT_FALSE(replies) << "accepted " << bytes.size() << " bytes";
    EXPECT_EQ(replies.error().reason(), "shared_unavailable");
  }
}

TEST(RedisConnectionTest, AShortOrMalformedAnswerIsAnErrorNotAHang) {
  for (std::string_view bytes : {"", ":1\r\n", ":1\r\n$10\r\nabc", "?what\r\n\r\n", ":1\r\n*2\r\n:1\r\n"}) {
    auto replies = Answered(bytes);
    EXPECT_FALSE(replies) << "'" << bytes << "' gave " << (replies ? replies->size() : 0) << " replies";
  }
}

// hiredis 0.14 reads "$3\r\nabcde\r\n" as "abc", taking "de" for the CRLF:
// the connection refuses the reply instead of believing it (kept for the
// fuzzer as fuzz/regressions/redis_reply/bulk-string-without-crlf).
TEST(RedisConnectionTest, ABulkStringWithoutItsCrlfIsRefused) {
  const std::string kept = fuzz::RegressionInput("redis_reply", "bulk-string-without-crlf");
  ASSERT_EQ(kept, ":1\r\n$3\r\nabcde\r\n");
  auto replies = Answered(kept);
  ASSERT_FALSE(replies) << "believed '" << (*replies)[1].text << "'";
  EXPECT_EQ(replies.error().reason(), "shared_unavailable");
  EXPECT_NE(replies.error().message.find("not followed by CRLF"), std::string::npos) << replies.error();
}

// Every input kept under fuzz/regressions/redis_reply/, replayed as the
// redis_reply harness does with its contract (fuzz/redis_reply_replay.h).
TEST(RedisConnectionTest, TheRedisReplyFuzzersKeptInputsKeepItsContract) {
  const std::filesystem::path kept = std::filesystem::path(KILN_FUZZ_REGRESSIONS_DIR) / "redis_reply";
  int replayed = 0;
  for (const auto& file : std::filesystem::directory_iterator(kept)) {
    const std::string input = fuzz::RegressionInput("redis_reply", file.path().filename().string());
    ASSERT_FALSE(input.empty()) << file.path();
    EXPECT_EQ(fuzz::ReplayRedisReply(input), std::nullopt) << file.path();
    ++replayed;
  }
  EXPECT_GE(replayed, 2);
}

// The contract the harness checks holds on well-framed replies too, and
// would catch a pipeline believing a badly framed one.
TEST(RedisConnectionTest, TheHarnessContractAcceptsFramedRepliesAndMessages) {
  EXPECT_EQ(fuzz::ReplayRedisReply(":1\r\n$5\r\nhello\r\n"), std::nullopt);
  EXPECT_EQ(fuzz::ReplayRedisReply("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n:1\r\n"), std::nullopt);
  EXPECT_EQ(fuzz::FramedValueLength(":1\r\n$3\r\nabcde\r\n"), 4u);
  EXPECT_EQ(fuzz::FramedValueLength("$3\r\nabcde\r\n"), std::nullopt);
}

}  // namespace
}  // namespace kiln::cache::shared
