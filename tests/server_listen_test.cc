// `kiln serve`'s sockets. It keeps its address to itself: a second server
// on a port a kiln already serves refuses to start (SO_REUSEPORT would
// otherwise let it take half of the trainers' connections to another
// store), saying who holds the port, before it opens a store. And it caps
// its connections below the open-files limit, so idle sockets cannot use up
// the descriptors that /healthz needs.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/serve_process.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using testing::RawHttpClient;
using testing::ServeProcess;

// A port nothing listens on right now (bound, read back, released).
uint16_t FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class ServeListenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kiln-listen-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::filesystem::create_directories(dir_ / "first");
    std::filesystem::create_directories(dir_ / "second");
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string Args(const std::string& name, uint16_t port, int loops) const {
    return "--listen 127.0.0.1:" + std::to_string(port) + " --db " + (dir_ / name / "kiln.db").string() +
           " --pool v5e:1 --loops " + std::to_string(loops) + " --access-log off";
  }

  std::filesystem::path dir_;
};

TEST_F(ServeListenTest, ASecondServerOnTheSameAddressRefusesToStart) {
  const uint16_t port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  ServeProcess first(dir_ / "first", Args("first", port, 2));
  ASSERT_EQ(first.WaitUntilServing(), port) << first.Stderr();

  for (int loops : {2, 1}) {
    SCOPED_TRACE(std::to_string(loops) + " loops");
    ServeProcess second(dir_ / "second", Args("second", port, loops));
    std::optional<int> exit_status = second.WaitForExit(std::chrono::seconds(60));
    ASSERT_TRUE(exit_status) << "the second server is still running";
    EXPECT_EQ(*exit_status, 1);
    const std::string expected = "kiln serve: 127.0.0.1:" + std::to_string(port) +
                                 " is already in use: pid " + std::to_string(first.pid()) + " (" +
                                 KILN_BINARY + " serve --listen 127.0.0.1:" + std::to_string(port);
    EXPECT_NE(second.Stderr().find(expected), std::string::npos) << second.Stderr();
    // Refused before its store was opened.
    EXPECT_FALSE(std::filesystem::exists(dir_ / "second" / "kiln.db"));
  }

  // Every connection still reaches the first server.
  for (int i = 0; i < 16; ++i) {
    Result<RawHttpClient> client = RawHttpClient::Connect(port);
    ASSERT_TRUE(client) << client.error().message;
    Result<testing::RawResponse> health = client->RoundTrip(testing::MakeRequest("GET", "/healthz"));
    ASSERT_TRUE(health) << health.error().message;
    EXPECT_EQ(health->status, 200);
  }
  EXPECT_EQ(first.Stop(), 0) << first.Stderr();
}

// The case, scaled down: far more idle sockets than descriptors.
TEST_F(ServeListenTest, IdleSocketsBeyondTheDescriptorLimitDoNotLockOutHealthz) {
  ServeProcess server(dir_ / "first", Args("first", 0, 2), "ulimit -n 64 &&");
  const uint16_t port = server.WaitUntilServing();
  ASSERT_NE(port, 0) << server.Stderr();
  std::vector<RawHttpClient> idle;
  for (int i = 0; i < 120; ++i) {
    Result<RawHttpClient> client = RawHttpClient::Connect(port);
    ASSERT_TRUE(client) << i << ": " << client.error().message;
    idle.push_back(std::move(*client));
  }
  // Health checks get through. While the backlog of idle sockets drains, a
  // loop whose share holds nothing idle may answer 503 with Retry-After
  // (the other loop closes its idle ones a moment later, on its own
  // thread; slow under a sanitizer on a busy machine): a client retrying
  // as told is served, a locked-out one never would be.
  auto get = [&](const char* path) -> Result<testing::RawResponse> {
    Result<testing::RawResponse> response = InternalError("no attempt");
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      Result<RawHttpClient> client = RawHttpClient::Connect(port);
      if (!client) return client.error();
      response = client->RoundTrip(testing::MakeRequest("GET", path));
      if (!response || response->status != 503) return response;
      if (response->body.find("\"overloaded\"") == std::string::npos) return response;
    }
    return response;
  };
  for (int i = 0; i < 3; ++i) {
    Result<testing::RawResponse> health = get("/healthz");
    ASSERT_TRUE(health) << health.error().message;
    EXPECT_EQ(health->status, 200) << health->body;
  }
  Result<testing::RawResponse> metrics = get("/metrics");
  ASSERT_TRUE(metrics) << metrics.error().message;
  // 64 descriptors, 2 loops: a quarter of the limit for connections.
  EXPECT_NE(metrics->body.find("\nkiln_http_max_connections 16\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("\nkiln_http_shed_connections_total "), std::string::npos);
  EXPECT_EQ(metrics->body.find("\nkiln_http_shed_connections_total 0\n"), std::string::npos) << metrics->body;
  EXPECT_EQ(metrics->body.find("kiln_http_accept_errors_total{"), std::string::npos) << "no EMFILE: " << metrics->body;
  EXPECT_TRUE(idle.front().WaitForClose()) << "the longest idle socket made room";
  EXPECT_EQ(server.Stop(), 0) << server.Stderr();
}

}  // namespace
}  // namespace kiln::api
