// kiln serve refuses bad input with the spec's statuses and codes, and
// keeps serving: malformed HLO, wrong content type, unknown or repeated
// query parameters, oversized, truncated and slow bodies, bad JSON, unknown
// keys, wrong methods, wrong inputs.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/io/safetensors.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::MakeRequest;
using testing::RawHttpClient;
using testing::ServerEnv;

using testing::kText;
using testing::kJson;

// Line 3, column 13: a space where ',' or ']' must be.
constexpr std::string_view kMalformed = "HloModule bad\nENTRY e {\n  p = f32[2 3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n}\n";

void ExpectError(const testing::RawResponse& response, int status, std::string_view code) {
  EXPECT_EQ(response.status, status) << response.body;
  json body = ServerEnv::Json(response);
  ASSERT_TRUE(body.is_object()) << response.body;
  EXPECT_EQ(body["error"]["code"], code) << response.body;
  EXPECT_FALSE(body["error"]["message"].get<std::string>().empty());
}

void ExpectStillServing(const ServerEnv& env) {
  auto health = env.Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(ServerEnv::Json(health)["status"], "ok");
}

TEST(ServerBadInputTest, MalformedHloIs400WithLineAndColumn) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto response = env.Call("POST", "/v1/compile", kMalformed, kText);
  ExpectError(response, 400, "hlo_parse_error");
  json error = ServerEnv::Json(response)["error"];
  EXPECT_EQ(error["line"], 3);
  EXPECT_EQ(error["column"], 13);
  EXPECT_TRUE(error["message"].get<std::string>().starts_with("3:13: ")) << error["message"];

  std::string unverifiable = "HloModule bad\nENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[3,2] negate(p)\n}\n";
  auto verify = env.Call("POST", "/v1/compile", unverifiable, kText);
  ExpectError(verify, 400, "hlo_verify_error");
  EXPECT_EQ(ServerEnv::Json(verify)["error"]["line"], 4) << verify.body;
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["compiles"]["errors"], 2);
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, BadJsonOptionsAndChips) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  ExpectError(env.Call("POST", "/v1/compile", "{\"hlo\": ", kJson), 400, "invalid_json");
  ExpectError(env.Call("POST", "/v1/compile", json{{"hlo", "x"}, {"extra", 1}}.dump(), kJson), 400, "invalid_json");
  ExpectError(env.Call("POST", "/v1/compile", json{{"hlo", testing::kAddModule}, {"options", {{"plans", "none"}}}}.dump(), kJson),
              400, "invalid_options");
  ExpectError(env.Call("POST", "/v1/compile", json{{"hlo", testing::kAddModule}, {"chip", "v9"}}.dump(), kJson), 400,
              "unknown_chip");
  ExpectError(env.Call("POST", "/v1/compile?scoped_vmem_bytes=999999999999", testing::kAddModule, kText), 400,
              "invalid_options");
  ExpectError(env.Call("POST", "/v1/compile?return=everything", testing::kAddModule, kText), 400, "bad_request");
  ExpectError(env.Call("GET", "/v1/entries?limit=0"), 400, "bad_request");
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, WrongContentTypeForExecuteIs415) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  ExpectError(env.Call("POST", "/v1/executables/" + key + "/execute", "a,b\n1,2\n", "Content-Type: text/csv\r\n"), 415,
              "unsupported_media_type");
  ExpectError(env.Call("POST", "/v1/compile", testing::kAddModule, "Content-Encoding: gzip\r\n"), 415,
              "unsupported_content_encoding");
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, BodiesOfAnotherMediaTypeAre415BeforeAnyWork) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto png = env.Call("POST", "/v1/compile", testing::kAddModule, "Content-Type: image/png\r\n");
  ExpectError(png, 415, "unsupported_media_type");
  EXPECT_EQ(ServerEnv::Json(png)["error"]["message"],
            "Content-Type 'image/png' is not accepted by POST /v1/compile; send one of text/plain, "
            "application/json, application/x-www-form-urlencoded, application/octet-stream");
  ExpectError(env.Call("POST", "/v1/explain", testing::kAddModule, "Content-Type: multipart/form-data; boundary=x\r\n"),
              415, "unsupported_media_type");
  ExpectError(env.Call("POST", "/v1/tune", "{}", kText), 415, "unsupported_media_type");
  const std::string execute = "/v1/executables/" + std::string(32, '0') + "/execute";
  auto untyped = env.Call("POST", execute, "{\"inputs\": []}");
  ExpectError(untyped, 415, "unsupported_media_type");
  EXPECT_NE(ServerEnv::Json(untyped)["error"]["message"].get<std::string>().find("has no Content-Type"),
            std::string::npos);
  json stats = ServerEnv::Json(env.Call("GET", "/v1/stats"));
  EXPECT_EQ(stats["compiles"]["requests"], 0) << stats;
  EXPECT_EQ(stats["entries"], 0) << stats;
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, HloTextIsAcceptedAsCurlAndUntypedClientsSendIt) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  // `curl --data-binary @model.hlo` (the README's examples) labels the body as a form.
  auto curl = env.Call("POST", "/v1/compile", testing::kAddModule,
                       "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_EQ(curl.status, 200) << curl.body;
  const std::string key = ServerEnv::Json(curl)["key"];
  for (std::string_view headers : {std::string_view(), std::string_view("Content-Type: application/octet-stream\r\n"),
                                   std::string_view("Content-Type: Text/Plain; charset=utf-8\r\n")}) {
    auto again = env.Call("POST", "/v1/compile", testing::kAddModule, headers);
    ASSERT_EQ(again.status, 200) << headers << again.body;
    EXPECT_EQ(ServerEnv::Json(again)["key"], key) << headers;
  }
  auto explained = env.Call("POST", "/v1/explain", testing::kAddModule, "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_EQ(explained.status, 200) << explained.body;
  EXPECT_EQ(ServerEnv::Json(explained)["cached"], true);
}

TEST(ServerBadInputTest, UnknownMisspeltAndRepeatedQueryParametersAre400) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto misspelt = env.Call("POST", "/v1/compile?chp=v6e", testing::kAddModule, kText);
  ExpectError(misspelt, 400, "invalid_query");
  EXPECT_EQ(ServerEnv::Json(misspelt)["error"]["message"],
            "unknown query parameter 'chp' for POST /v1/compile (did you mean 'chip'?); accepted: chip, plan, "
            "scoped_vmem_bytes, topology, arg_shapes, return");
  auto twice = env.Call("POST", "/v1/compile?chip=v5e&chip=v6e", testing::kAddModule, kText);
  ExpectError(twice, 400, "invalid_query");
  EXPECT_EQ(ServerEnv::Json(twice)["error"]["message"],
            "query parameter 'chip' is given 2 times for POST /v1/compile; give it once");
  ExpectError(env.Call("POST", "/v1/explain?return=executable", testing::kAddModule, kText), 400, "invalid_query");
  auto entries = env.Call("GET", "/v1/entries?limt=5");
  ExpectError(entries, 400, "invalid_query");
  EXPECT_NE(ServerEnv::Json(entries)["error"]["message"].get<std::string>().find("did you mean 'limit'?"),
            std::string::npos);
  auto stats = env.Call("GET", "/v1/stats?verbose=1");
  ExpectError(stats, 400, "invalid_query");
  EXPECT_NE(ServerEnv::Json(stats)["error"]["message"].get<std::string>().find("takes no query parameters"),
            std::string::npos);
  const std::string key = std::string(32, '0');
  ExpectError(env.Call("GET", "/v1/executables/" + key + "?format=json"), 400, "invalid_query");
  EXPECT_EQ(env.Call("HEAD", "/v1/executables/" + key + "?format=json").status, 400);
  ExpectError(env.Call("DELETE", "/v1/executables/" + key + "?force=1"), 400, "invalid_query");
  ExpectError(env.Call("GET", "/v1/pool?x"), 400, "invalid_query");
  ExpectError(env.Call("GET", "/metrics?name=kiln_http"), 400, "invalid_query");
  ExpectError(env.Call("GET", "/healthz?probe=1"), 400, "invalid_query");
  // Nothing was compiled: the refusal came first.
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["compiles"]["requests"], 0);
  // The accepted ones still work.
  auto compiled = env.Call("POST", "/v1/compile?chip=v6e&plan=none&scoped_vmem_bytes=0&return=summary",
                           testing::kAddModule, kText);
  EXPECT_EQ(compiled.status, 200) << compiled.body;
  EXPECT_EQ(env.Call("GET", "/v1/entries?chip=v6e&plan=none&sort=hits&limit=5").status, 200);
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, OversizedBodyIs413) {
  http::HttpServerOptions http_options = ServerEnv::DefaultHttpOptions();
  http_options.max_body_bytes = 1024;
  ServerEnv env({}, http_options);
  ASSERT_TRUE(env.ok());
  ExpectError(env.Call("POST", "/v1/compile", std::string(4096, 'x'), kText), 413, "payload_too_large");
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, TruncatedBodyAndSlowClientAreCutOff) {
  http::HttpServerOptions http_options = ServerEnv::DefaultHttpOptions();
  http_options.request_timeout = std::chrono::milliseconds(300);
  ServerEnv env({}, http_options);
  ASSERT_TRUE(env.ok());
  // Content-Length promises more than arrives; the client then goes quiet.
  Result<RawHttpClient> truncated = RawHttpClient::Connect(env.port());
  ASSERT_TRUE(truncated);
  ASSERT_TRUE(truncated->Send("POST /v1/compile HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\nHloModule m\n"));
  truncated->ShutdownWrite();
  // A slow client sends its headers a byte at a time and never finishes.
  Result<RawHttpClient> slow = RawHttpClient::Connect(env.port());
  ASSERT_TRUE(slow);
  ASSERT_TRUE(slow->Send("POST /v1/compile HTTP/1.1\r\nHo"));
  auto answer = slow->ReadResponse();
  if (answer) {
    EXPECT_EQ(answer->status, 408);
  }
  EXPECT_TRUE(slow->WaitForClose()) << "a slow client is cut off after the request timeout";
  auto cut = truncated->ReadResponse();
  if (cut) {
    EXPECT_EQ(cut->status / 100, 4) << cut->body;
  }
  EXPECT_TRUE(truncated->WaitForClose());
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, UnknownKeysAndRoutes) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  ExpectError(env.Call("GET", "/v1/executables/" + std::string(32, '0')), 404, "not_found");
  ExpectError(env.Call("GET", "/v1/executables/abc"), 400, "invalid_key");
  ExpectError(env.Call("POST", "/v1/executables/" + std::string(32, 'f') + "/execute", "{}", kJson), 404, "not_found");
  ExpectError(env.Call("GET", "/v1/nothing-here"), 404, "not_found");
  ExpectError(env.Call("POST", "/v1/tune", "{}", kJson), 400, "invalid_json");
  ExpectError(env.Call("GET", "/v1/tune/" + std::string(16, '0')), 404, "not_found");
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, WrongMethodIs405WithAllow) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto response = env.Call("PUT", "/v1/compile", "x");
  ExpectError(response, 405, "method_not_allowed");
  EXPECT_NE(response.headers.Get("Allow").value_or("").find("POST"), std::string_view::npos);
  auto executables = env.Call("POST", "/v1/executables/" + std::string(32, '0'), "x");
  EXPECT_EQ(executables.status, 405);
  EXPECT_NE(executables.headers.Get("Allow").value_or("").find("DELETE"), std::string_view::npos);
  ExpectStillServing(env);
}

TEST(ServerBadInputTest, WrongInputsAre422NamingTheParameter) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string key = ServerEnv::Json(env.Call("POST", "/v1/compile", testing::kAddModule, kText))["key"];
  const std::string path = "/v1/executables/" + key + "/execute";
  runtime::io::SafetensorsFile inputs;
  inputs.tensors = {{"0", hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}))},
                    {"1", hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {3, 2}))}};
  auto shape = env.Call("POST", path, *runtime::io::SerializeSafetensors(inputs),
                        "Content-Type: application/vnd.safetensors\r\n");
  ExpectError(shape, 422, "input_mismatch");
  json error = ServerEnv::Json(shape)["error"];
  EXPECT_EQ(error["parameter"], "1");
  EXPECT_EQ(error["expected"], "f32[2,3]");
  EXPECT_EQ(error["got"], "f32[3,2]");

  inputs.tensors.pop_back();
  auto count = env.Call("POST", path, *runtime::io::SerializeSafetensors(inputs),
                        "Content-Type: application/vnd.safetensors\r\n");
  ExpectError(count, 422, "input_mismatch");
  EXPECT_EQ(ServerEnv::Json(count)["error"]["parameter"], "1");

  json typed = {{"inputs",
                 {{{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}},
                  {{"shape", {2, 3}}, {"dtype", "s32"}, {"data", {1, 2, 3, 4, 5, 6}}}}}};
  auto type = env.Call("POST", path, typed.dump(), kJson);
  ExpectError(type, 422, "input_mismatch");
  EXPECT_EQ(ServerEnv::Json(type)["error"]["parameter"], "1");

  ExpectError(env.Call("POST", path, "not safetensors", "Content-Type: application/vnd.safetensors\r\n"), 400,
              "invalid_safetensors");
  ExpectError(env.Call("POST", path, "[1,2", kJson), 400, "invalid_json");
  json short_data = {{"inputs",
                      {{{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2}}},
                       {{"shape", {2, 3}}, {"dtype", "f32"}, {"data", {1, 2, 3, 4, 5, 6}}}}}};
  ExpectError(env.Call("POST", path, short_data.dump(), kJson), 400, "invalid_inputs");
  EXPECT_EQ(ServerEnv::Json(env.Call("GET", "/v1/stats"))["executions"]["errors"], 6);
  ExpectStillServing(env);
}

}  // namespace
}  // namespace kiln::api
