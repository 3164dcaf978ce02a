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

#include "server/api/auth.h"
#include "tests/server_test_env.h"

namespace kiln::api {
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
  EXPECT_NE(page.dom.find("<td>⚠ jit_train_step</td>"), std::string::npos) << "a storm, marked";
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
  ApiOptions options;
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
  ApiOptions options;
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


// Layout with a busy store (found with ~300 entries): every module named
// main was a "storm", "what changed" ran out of its card as a list of 36
// "parameter N rank", the tuning table ran past its card, the timeline was
// pushed 6,000 px down, and kernel colours keyed on names the API does not
// use. The page checks its own layout (data-overflow, data-tops).
TEST(ServerDashboardTest, ABusyStoreKeepsTheLayoutAndOnlyRealStorms) {
  ApiOptions options;
  options.pool_spec = "v5e:2,v5e:2x2";
  ServerEnv env(std::move(options));
  ASSERT_TRUE(env.ok());
  // 150 different programs that all call themselves main.
  for (int length = 1; length <= 150; ++length) {
    std::string text = "HloModule main\nENTRY e {\n  x0 = f32[8,128] parameter(0)\n";
    for (int i = 1; i <= length; ++i) {
      text += std::string(i == length ? "  ROOT" : " ") + " x" + std::to_string(i) + " = f32[8,128] " +
              (i % 3 == 0 ? "exponential" : i % 3 == 1 ? "negate" : "tanh") + "(x" + std::to_string(i - 1) + ")\n";
    }
    ASSERT_EQ(env.Call("POST", "/v1/compile", text + "}\n", kText).status, 200);
  }
  // One real storm: a step whose batch size changes, over 40 parameters
  // that all change rank at once in one variant (a long "what changed").
  for (int batch : {16, 17, 33, 40, 64}) ASSERT_EQ(env.Call("POST", "/v1/compile", Step(batch), kText).status, 200);
  // The same program for one chip and for a 2x2 slice: no storm.
  const std::string add = "HloModule add\nENTRY e {\n  a = f32[8] parameter(0)\n  ROOT n = f32[8] negate(a)\n}\n";
  ASSERT_EQ(env.Call("POST", "/v1/compile", add, kText).status, 200);
  ASSERT_EQ(env.Call("POST", "/v1/compile?topology=2x2", add, kText).status, 200);
  // Long names.
  const std::string long_name(180, 'x');
  for (int batch : {8, 9, 10}) {
    std::string step = Step(batch);
    step.replace(step.find("jit_train_step"), 14, "a_module_with_a_very_long_name_" + long_name);
    ASSERT_EQ(env.Call("POST", "/v1/compile", step, kText).status, 200);
  }

  const std::string url = "http://127.0.0.1:" + std::to_string(env.port()) + "/";
  const std::string screenshot = std::string(KILN_TEST_ARTIFACT_DIR) + "/dashboard-busy.png";
  std::filesystem::remove(screenshot);
  Page page = Load(url, env.dir(), screenshot);
  EXPECT_EQ(page.console, "");
  EXPECT_EQ(Figure(page.dom, "storms"), "2") << "the step and the long-named step; not main, not add";
  std::smatch overflow;
  ASSERT_TRUE(std::regex_search(page.dom, overflow, std::regex("data-overflow=\"([^\"]*)\"")));
  EXPECT_EQ(overflow[1].str(), "") << "cards whose content spills out of them";
  std::smatch timeline;
  ASSERT_TRUE(std::regex_search(page.dom, timeline, std::regex("Kernel timeline=(\\d+)")));
  EXPECT_LT(std::stoi(timeline[1]), 2000) << "the timeline is pushed down the page";
  EXPECT_EQ(page.dom.find("differ in structure"), std::string::npos);
  EXPECT_NE(page.dom.find("topology: none, 2x2"), std::string::npos) << "add's options, said as such";
  for (const char* bound : {"compute", "memory", "ici", "overhead"}) {
    EXPECT_NE(page.dom.find("data-bound=\"" + std::string(bound) + "\""), std::string::npos) << bound << " legend";
  }
  EXPECT_NE(page.dom.find("<rect x="), std::string::npos);
  EXPECT_EQ(page.dom.find("fill=\"#5d6878\""), std::string::npos) << "a kernel in the fallback grey";
  ASSERT_TRUE(std::filesystem::exists(screenshot));
}

}  // namespace
}  // namespace kiln::api
