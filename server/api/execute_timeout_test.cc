#include "server/api/execute_timeout.h"

#include <gtest/gtest.h>

#include "server/http/error_status.h"

namespace kiln::api {
namespace {

using std::chrono::milliseconds;

http::Request WithTimeout(std::optional<std::string> query, std::optional<std::string> header) {
  http::Request request;
  if (query) request.query.emplace_back("timeout", *query);
  if (header) request.headers.Add("X-Kiln-Timeout", *header);
  return request;
}

TEST(ExecuteTimeoutTest, TheRequestMayLowerTheServersTimeoutButNeverRaiseIt) {
  const milliseconds server(60'000);
  EXPECT_EQ(*ExecuteTimeout(WithTimeout(std::nullopt, std::nullopt), server), server);
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("5s", std::nullopt), server), milliseconds(5000));
  EXPECT_EQ(*ExecuteTimeout(WithTimeout(std::nullopt, "250ms"), server), milliseconds(250));
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("5s", "250ms"), server), milliseconds(250)) << "the smaller wins";
  EXPECT_EQ(*ExecuteTimeout(WithTimeout("2h", std::nullopt), server), server) << "never above the server's";

  Result<milliseconds> bad = ExecuteTimeout(WithTimeout("0", std::nullopt), server);
  ASSERT_FALSE(bad);
  EXPECT_EQ(http::HttpStatusOf(bad.error()), 400);
  EXPECT_NE(bad.error().message.find("query parameter timeout"), std::string::npos) << bad.error().message;
  bad = ExecuteTimeout(WithTimeout(std::nullopt, "soon"), server);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("header X-Kiln-Timeout"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace kiln::api
