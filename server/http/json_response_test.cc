#include "server/http/json_response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln::http {
namespace {

TEST(JsonResponseTest, ErrorHasCodeAndMessage) {
  Response response = ErrorResponse(413, "payload_too_large", "body \"x\" is 5 bytes over");
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_FALSE(response.compressible);
  nlohmann::json body = nlohmann::json::parse(response.body_view());
  EXPECT_EQ(body["error"]["code"], "payload_too_large");
  EXPECT_EQ(body["error"]["message"], "body \"x\" is 5 bytes over");
}

TEST(JsonResponseTest, InvalidUtf8InAMessageDoesNotFail) {
  Response response = ErrorResponse(404, "not_found", "no route for /\xff\xfe");
  EXPECT_TRUE(nlohmann::json::accept(response.body_view()));
}

}  // namespace
}  // namespace kiln::http
