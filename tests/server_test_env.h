// A real KilnApi behind a real HttpServer on 127.0.0.1 with an
// ephemeral port and a fresh database in a temporary directory, plus a
// raw-socket client, for the server's end-to-end tests. Header-only;
// not thread-safe except Call/CallOn, which open one connection each.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/http/http_server.h"
#include "server/http/testing/raw_http_client.h"
#include "server/api/kiln_api.h"

namespace kiln::api::testing {

using http::testing::MakeRequest;
using http::testing::RawHttpClient;
using http::testing::RawResponse;

// Header lines for Call's `headers`.
inline constexpr std::string_view kText = "Content-Type: text/plain\r\n";
inline constexpr std::string_view kJson = "Content-Type: application/json\r\n";
inline std::string Bearer(std::string_view token) { return "Authorization: Bearer " + std::string(token) + "\r\n"; }

inline constexpr const char* kAddModule = R"(HloModule add, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[2,3]{1,0} parameter(1)
  ROOT sum = f32[2,3]{1,0} add(x, y)
}
)";

// JSON inputs of kAddModule; it answers {11, 22, 33, 44, 55, 66}.
inline constexpr std::string_view kAddInputs =
    R"({"inputs": [{"shape": [2,3], "dtype": "f32", "data": [1,2,3,4,5,6]},)"
    R"( {"shape": [2,3], "dtype": "f32", "data": [10,20,30,40,50,60]}]})";

// while(true): only a deadline, a cancellation or the step budget ends it.
inline constexpr const char* kSpinModule = R"(HloModule spin

cond {
  s = (s32[], f32[4]) parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  v = f32[4] get-tuple-element(s), index=1
  w = f32[4] add(v, v)
  ROOT r = (s32[], f32[4]) tuple(n, w)
}

ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(loop), index=1
}
)";
inline constexpr std::string_view kSpinInputs = R"({"inputs":[{"shape":[4],"dtype":"f32","data":[1,2,3,4]}]})";

// The same graph with parameter 0 of another shape.
inline std::string NegateModule(int rows) {
  return "HloModule negate\n\nENTRY main {\n  p0 = f32[" + std::to_string(rows) +
         ",128] parameter(0)\n  p1 = f32[4,4] parameter(1)\n  n0 = f32[" + std::to_string(rows) +
         ",128] negate(p0)\n  n1 = f32[4,4] negate(p1)\n  ROOT t = (f32[" + std::to_string(rows) +
         ",128], f32[4,4]) tuple(n0, n1)\n}\n";
}

class ServerEnv {
 public:
  // `db_uri_query`, when given, opens the database as the SQLite URI
  // "file:DIR/kiln.db?QUERY" (e.g. "vfs=kiln-quota", "mode=ro").
  explicit ServerEnv(ApiOptions options = {}, http::HttpServerOptions http_options = DefaultHttpOptions(),
                     std::string_view db_uri_query = {}) {
    char pattern[] = "/tmp/kiln-server-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    options.db_path = dir_ / "kiln.db";
    if (!db_uri_query.empty()) options.db_path = "file:" + options.db_path + "?" + std::string(db_uri_query);
    if (options.pool_spec == "v5e:4") options.pool_spec = "v5e:2";
    auto service = KilnApi::Create(std::move(options));
    EXPECT_TRUE(service) << (service ? "" : service.error().ToString());
    if (!service) return;
    service_ = std::move(*service);
    http::Router router;
    EXPECT_TRUE(service_->RegisterRoutes(router));
    http_options.metrics = &service_->metrics_registry();
    server_ = std::make_unique<http::HttpServer>(std::move(http_options), std::move(router));
    Status started = server_->Start();
    EXPECT_TRUE(started) << (started ? "" : started.error().ToString());
  }
  ~ServerEnv() {
    server_.reset();
    service_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  static http::HttpServerOptions DefaultHttpOptions() {
    http::HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.request_timeout = std::chrono::seconds(20);
    options.idle_timeout = std::chrono::seconds(20);
    options.shutdown_grace = std::chrono::seconds(5);
    options.access_log = nullptr;
    return options;
  }

  bool ok() const { return server_ != nullptr && server_->port() != 0; }
  uint16_t port() const { return server_->port(); }
  KilnApi& service() { return *service_; }
  const std::filesystem::path& dir() const { return dir_; }

  // One request on a new connection.
  RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {},
                   std::string_view headers = {}) const {
    Result<RawHttpClient> client = RawHttpClient::Connect(port(), std::chrono::seconds(60));
    EXPECT_TRUE(client) << client.error().ToString();
    if (!client) return {};
    Result<RawResponse> response = client->RoundTrip(MakeRequest(method, target, body, headers), method == "HEAD");
    EXPECT_TRUE(response) << method << " " << target << ": " << response.error().ToString();
    return response ? std::move(*response) : RawResponse{};
  }

  // The JSON body of a response (null when it is not JSON).
  static nlohmann::json Json(const RawResponse& response) {
    return nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  }

  std::string Write(const std::string& name, std::string_view content) const {
    std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    return path.string();
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<KilnApi> service_;
  std::unique_ptr<http::HttpServer> server_;
};

// A response's JSON body (discarded, not an exception, when it is not
// JSON), and its error's code and message ("" when it has none).
inline nlohmann::json Body(const RawResponse& response) {
  return nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
}
inline std::string ErrorCode(const RawResponse& response) {
  const nlohmann::json body = Body(response);
  return body.is_object() && body.contains("error") ? body["error"].value("code", "") : "";
}
inline std::string ErrorMessage(const RawResponse& response) {
  const nlohmann::json body = Body(response);
  return body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
}

// Runs a shell command; its exit status and standard output.
struct CommandResult {
  int exit_code = -1;
  std::string out;
};

inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.out.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kiln::api::testing
