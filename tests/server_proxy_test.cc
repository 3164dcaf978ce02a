// kiln behind a stock reverse proxy: Debian's nginx with a plain
// `proxy_pass` and its default buffers (4-8 KiB for a response's headers),
// started by the test on a free loopback port. Every answer of the API must
// pass it; a probe found executes of a 60-kernel program answered 502
// ("upstream sent too big header") because the whole kernel list rode in a
// header.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/io/safetensors.h"
#include "server/http/testing/raw_http_client.h"
#include "tests/kiln_serve_process.h"

namespace kiln::api::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string NginxBinary() {
  for (const char* path : {"/usr/sbin/nginx", "/usr/bin/nginx"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

// A loopback port nobody listens on now.
uint16_t FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

// nginx in the foreground (one process, as the invoking user) proxying
// 127.0.0.1:port() to `upstream`; killed and reaped on destruction.
class NginxProxy {
 public:
  explicit NginxProxy(uint16_t upstream) : port_(FreePort()) {
    char pattern[] = "/tmp/kiln-nginx-XXXXXX";
    dir_ = mkdtemp(pattern);
    const std::string d = dir_.string();
    std::ofstream(dir_ / "nginx.conf")
        << "daemon off;\nmaster_process off;\npid " << d << "/nginx.pid;\nerror_log " << d << "/error.log;\n"
        << "events {}\nhttp {\n  access_log off;\n  client_body_temp_path " << d << "/body;\n"
        << "  proxy_temp_path " << d << "/proxy;\n  fastcgi_temp_path " << d << "/fastcgi;\n"
        << "  uwsgi_temp_path " << d << "/uwsgi;\n  scgi_temp_path " << d << "/scgi;\n"
        << "  client_max_body_size 64m;\n"
        << "  server {\n    listen 127.0.0.1:" << port_ << ";\n"
        << "    location / { proxy_pass http://127.0.0.1:" << upstream << "; }\n  }\n}\n";
    pid_ = fork();
    if (pid_ == 0) {
      const std::string binary = NginxBinary(), conf = d + "/nginx.conf";
      execl(binary.c_str(), binary.c_str(), "-p", d.c_str(), "-c", conf.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (const auto give_up = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < give_up;
         std::this_thread::sleep_for(20ms)) {
      if (http::testing::RawHttpClient::Connect(port_, 1s)) {
        ready_ = true;
        break;
      }
    }
  }
  ~NginxProxy() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  bool ready() const { return ready_; }
  http::testing::RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {},
                                  std::string_view headers = {}) const {
    auto response = http::testing::RoundTripOnce(port_, method, target, body, headers, 60s);
    EXPECT_TRUE(response) << response.error().ToString();
    return response ? *response : http::testing::RawResponse{};
  }
  std::string error_log() const {
    std::ifstream in(dir_ / "error.log");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  std::filesystem::path dir_;
  uint16_t port_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

// `dots` chained dots, each a kernel of its own.
std::string ManyKernelModule(int dots) {
  std::string text = "HloModule many_kernels\n\nENTRY main {\n  p0 = f32[8,128]{1,0} parameter(0)\n"
                     "  w = f32[128,128]{1,0} parameter(1)\n";
  std::string prev = "p0";
  for (int i = 0; i < dots; ++i) {
    const std::string d = "d" + std::to_string(i), t = "t" + std::to_string(i);
    text += "  " + d + " = f32[8,128]{1,0} dot(" + prev + ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    text += std::string(i + 1 == dots ? "  ROOT " : "  ") + t + " = f32[8,128]{1,0} tanh(" + d + ")\n";
    prev = t;
  }
  return text + "}\n";
}

TEST(ServerProxyTest, EveryAnswerPassesAStockNginx) {
  if (NginxBinary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup.sh installs it)";
  KilnServeProcess kiln({"--pool", "v5e:1"});
  ASSERT_TRUE(kiln.ok());
  NginxProxy nginx(kiln.port());
  ASSERT_TRUE(nginx.ready()) << nginx.error_log();

  auto compiled = nginx.Call("POST", "/v1/compile", ManyKernelModule(60), "Content-Type: text/plain\r\n");
  ASSERT_EQ(compiled.status, 200) << compiled.body << nginx.error_log();
  const json answer = json::parse(compiled.body);
  const std::string key = answer["key"];
  ASSERT_GE(answer["kernels"].get<int>(), 60);

  // JSON in, JSON out: the whole profile in the body, a short summary in
  // the header.
  json inputs = {{"inputs",
                  {{{"shape", {8, 128}}, {"dtype", "f32"}, {"data", std::vector<float>(8 * 128, 0.01f)}},
                   {{"shape", {128, 128}}, {"dtype", "f32"}, {"data", std::vector<float>(128 * 128, 0.001f)}}}}};
  auto ran = nginx.Call("POST", "/v1/executables/" + key + "/execute", inputs.dump(),
                        "Content-Type: application/json\r\n");
  ASSERT_EQ(ran.status, 200) << ran.body.substr(0, 300) << "\n" << nginx.error_log();
  const json result = json::parse(ran.body);
  EXPECT_GE(result["kernels"].size(), 60u);
  const std::string summary(ran.headers.Get("X-Kiln-Profile").value_or(""));
  EXPECT_LT(summary.size(), 256u) << summary;
  EXPECT_EQ(summary.rfind("kernels=" + std::to_string(result["kernels"].size()), 0), 0u) << summary;

  // Safetensors in and out: the profile rides in the file's metadata.
  runtime::io::SafetensorsFile file;
  hlo::Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {8, 128}));
  hlo::Literal w(hlo::Shape(hlo::PrimitiveType::kF32, {128, 128}));
  file.tensors = {{"0", x}, {"1", w}};
  auto binary = nginx.Call("POST", "/v1/executables/" + key + "/execute", *runtime::io::SerializeSafetensors(file),
                           "Content-Type: application/vnd.safetensors\r\n");
  ASSERT_EQ(binary.status, 200) << nginx.error_log();
  auto served = runtime::io::ParseSafetensors(binary.body);
  ASSERT_TRUE(served) << served.error().ToString();
  EXPECT_GE(json::parse(served->metadata.at("kiln.kernels")).size(), 60u);

  // The rest of the API, through the same proxy.
  EXPECT_EQ(nginx.Call("GET", "/v1/executables/" + key).status, 200);
  EXPECT_EQ(nginx.Call("GET", "/v1/executables/" + key + "/trace").status, 200);
  EXPECT_EQ(nginx.Call("POST", "/v1/executables/" + key + "/time").status, 200);
  for (const char* path : {"/v1/stats", "/v1/entries", "/v1/pool", "/metrics", "/healthz", "/"}) {
    EXPECT_EQ(nginx.Call("GET", path).status, 200) << path;
  }
  EXPECT_EQ(nginx.error_log().find("too big header"), std::string::npos) << nginx.error_log();
}

}  // namespace
}  // namespace kiln::api::testing
