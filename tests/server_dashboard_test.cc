// The dashboard at GET / in a real headless Chromium (Debian's, installed by
// scripts/setup.sh): the page loads without console output, shows the
// figures of a server this test filled (hits, entries, recompile storms,
// pool chips, a kernel timeline), shows a tenant only its own figures, and
// leaves a screenshot (build/tests/dashboard.png) as the test's artifact.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "server/auth.h"
#include "tests/server_test_env.h"

namespace kiln::server {
namespace {

using testing::ServerEnv;

using testing::kText;

std::string Step(int batch) {
  const std::string shape = "f32[" + std::to_string(batch) + ",128]";
  return "HloModule jit_train_step\nENTRY main {\n  w = " + shape + " parameter(0)\n  lr = f32[] constant(0.1)\n"
         "  b = " + shape + " broadcast(lr), dimensions={}\n  ROOT m = " + shape + " multiply(w, b)\n}\n";
}

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

struct Page {
  std::string dom;
  std::string console;  // Chromium's CONSOLE log lines: the page's console output
};

// Loads `url` headless, lets its scripts run for a few (virtual) seconds,
// and returns the DOM they left; `screenshot` also saves a PNG.
Page Load(const std::string& url, const std::filesystem::path& dir, const std::string& screenshot = "") {
  const std::string chromium = Chromium();
  EXPECT_FALSE(chromium.empty()) << "no chromium: scripts/setup.sh installs Debian's chromium package";
  if (chromium.empty()) return {};
  const std::string flags =
      " --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + (dir / "profile").string() +
      " --virtual-time-budget=4000 --enable-logging=stderr --v=0 --window-size=1280,1500";
  const std::filesystem::path log = dir / "chromium.log";
  const std::string command = "timeout 90 " + chromium + flags + " --dump-dom '" + url + "' 2>" + log.string();
  Page page;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0) page.dom.append(buffer, n);
  EXPECT_EQ(pipe != nullptr ? pclose(pipe) : -1, 0) << "chromium failed; see " << log;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos) page.console += line + "\n";
  }
  if (!screenshot.empty()) {
    const std::string shot = "timeout 90 " + chromium + flags + " --screenshot=" + screenshot + " '" + url + "' 2>/dev/null";
    EXPECT_EQ(std::system(shot.c_str()), 0);
  }
  return page;
}

// The text of the element with `id` (a figure the page wrote).
std::string Figure(const std::string& dom, const std::string& id) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("id=\"" + id + "\"[^>]*>([^<]*)<"))) return "(no #" + id + ")";
  return match[1];
}

TEST(ServerDashboardTest, ShowsTheFiguresOfAFilledServerWithoutConsoleErrors) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  for (int batch : {16, 17, 33}) ASSERT_EQ(env.Call("POST", "/v1/compile", Step(batch), kText).status, 200);
  ASSERT_EQ(env.Call("POST", "/v1/compile", Step(33), kText).status, 200);  // a hit

  auto page_answer = env.Call("GET", "/");
  ASSERT_EQ(page_answer.status, 200);
  EXPECT_EQ(page_answer.headers.Get("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page_answer.headers.Get("Content-Security-Policy").value_or("").find("connect-src 'self'"),
            std::string::npos);

  const std::string url = "http://127.0.0.1:" + std::to_string(env.port()) + "/";
  const std::string screenshot = std::string(KILN_TEST_ARTIFACT_DIR) + "/dashboard.png";
  std::filesystem::remove(screenshot);
  Page page = Load(url, env.dir(), screenshot);
  EXPECT_EQ(page.console, "") << "the page wrote to the console";
  EXPECT_EQ(Figure(page.dom, "hits"), "1");
  EXPECT_EQ(Figure(page.dom, "misses"), "3");
  EXPECT_EQ(Figure(page.dom, "hit-rate"), "25.0%");
  EXPECT_EQ(Figure(page.dom, "entries"), "3");
  EXPECT_EQ(Figure(page.dom, "storms"), "1");
  EXPECT_NE(page.dom.find("<td>jit_train_step</td>"), std::string::npos);
  EXPECT_NE(page.dom.find("pad it to a few fixed sizes"), std::string::npos);
  EXPECT_NE(page.dom.find("<td>v5e:0</td>"), std::string::npos);
  EXPECT_NE(page.dom.find("no tuning jobs"), std::string::npos);
  EXPECT_NE(page.dom.find("data-kernel=\"m\""), std::string::npos) << "the kernel timeline of the chosen entry";
  EXPECT_NE(page.dom.find("id=\"problem\" style=\"display: none;\""), std::string::npos) << "no API call failed";
  EXPECT_NE(page.dom.find("<polyline points="), std::string::npos) << "the hit-rate chart";
  EXPECT_EQ(Figure(page.dom, "interval"), "10");
  ASSERT_TRUE(std::filesystem::exists(screenshot));
  EXPECT_GT(std::filesystem::file_size(screenshot), 10'000u);
}

TEST(ServerDashboardTest, StatsHistoryIsSampledByTheServer) {
  ServiceOptions options;
  options.stats_history_interval = std::chrono::milliseconds(20);
  options.stats_history_samples = 4;
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  ASSERT_EQ(env.Call("POST", "/v1/compile", Step(8), kText).status, 200);
  ASSERT_EQ(env.Call("POST", "/v1/compile", Step(8), kText).status, 200);
  nlohmann::json history;
  for (int i = 0; i < 200; ++i) {  // until a sample after the compiles, at most 4 s
    history = ServerEnv::Json(env.Call("GET", "/v1/stats/history"));
    if (!history["samples"].empty() && history["samples"].back()["hits"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_DOUBLE_EQ(history["interval_s"].get<double>(), 0.02);
  ASSERT_FALSE(history["samples"].empty());
  EXPECT_LE(history["samples"].size(), 4u);
  const nlohmann::json& last = history["samples"].back();
  EXPECT_EQ(last["hits"], 1);
  EXPECT_EQ(last["misses"], 1);
  EXPECT_GE(last["compile_seconds_saved"].get<double>(), 0);
  EXPECT_EQ(env.Call("GET", "/v1/stats/history?x=1").status, 400);
}

TEST(ServerDashboardTest, ATenantSeesOnlyItsOwnFigures) {
  Result<Authenticator> auth = Authenticator::Parse(
      HashToken("alice-token") + " alice compile\n" + HashToken("bob-token") + " bob read\n", "dashboard-auth");
  ASSERT_TRUE(auth) << auth.error().message;
  ServiceOptions options;
  options.auth = std::move(*auth);
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  const std::string alice = std::string(kText) + "Authorization: Bearer alice-token\r\n";
  for (int batch : {8, 9, 10}) ASSERT_EQ(env.Call("POST", "/v1/compile", Step(batch), alice).status, 200);
  EXPECT_EQ(env.Call("GET", "/").status, 200) << "the page itself needs no token";

  const std::string url = "http://127.0.0.1:" + std::to_string(env.port()) + "/";
  Page as_alice = Load(url + "#token=alice-token", env.dir());
  EXPECT_EQ(Figure(as_alice.dom, "tenant"), "alice");
  EXPECT_EQ(Figure(as_alice.dom, "entries"), "3");
  EXPECT_EQ(Figure(as_alice.dom, "storms"), "1");
  Page as_bob = Load(url + "#token=bob-token", env.dir());
  EXPECT_EQ(Figure(as_bob.dom, "tenant"), "bob");
  EXPECT_EQ(Figure(as_bob.dom, "entries"), "0");
  EXPECT_EQ(Figure(as_bob.dom, "storms"), "0");
  EXPECT_EQ(as_bob.dom.find("jit_train_step"), std::string::npos) << "nothing of alice's";
}

}  // namespace
}  // namespace kiln::server
