// `kiln serve` and `kiln prewarm` flags as people type them (found by a new
// user): durations in the form the other timeout flags take, and a store
// budget that cannot be ten bytes by accident and is echoed at start.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/kiln_serve_process.h"
#include "tests/run_kiln.h"

namespace kiln::api::testing {
namespace {

TEST(ServerFlagsTest, DurationsAndBudgetsTakeUnitsAndTheStartLineSaysTheBudget) {
  KilnServeProcess server({"--request-timeout", "30s", "--max-bytes", "64MiB"});
  ASSERT_TRUE(server.ok());
  EXPECT_NE(server.output().find("store budget 64.0 MiB"), std::string::npos) << server.output();
  KilnServeProcess unbounded({"--request-timeout", "1.5s"});
  ASSERT_TRUE(unbounded.ok());
  EXPECT_NE(unbounded.output().find("no store budget"), std::string::npos) << unbounded.output();

  const std::string db = (std::filesystem::temp_directory_path() / "kiln-flags-test.db").string();
  kiln::testing::RunResult tiny = kiln::testing::RunKiln("serve --listen 127.0.0.1:0 --max-bytes 10 --db " + db);
  EXPECT_EQ(tiny.exit_code, 1);
  EXPECT_NE(tiny.err.find("--max-bytes: store budget '10' is 10 bytes"), std::string::npos) << tiny.err;
  EXPECT_FALSE(std::filesystem::exists(db));
  kiln::testing::RunResult bad = kiln::testing::RunKiln("serve --listen 127.0.0.1:0 --request-timeout soon --db " + db);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--request-timeout: duration 'soon'"), std::string::npos) << bad.err;

  // prewarm --timeout takes the same form.
  const std::filesystem::path module = std::filesystem::temp_directory_path() / "kiln-flags-test.hlo";
  std::ofstream(module) << "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
  kiln::testing::RunResult prewarm = kiln::testing::RunKiln(
      "prewarm " + module.string() + " --server http://127.0.0.1:" + std::to_string(server.port()) +
      " --timeout 10s --json");
  EXPECT_EQ(prewarm.exit_code, 0) << prewarm.err;
  EXPECT_NE(prewarm.out.find("\"compiled\":1"), std::string::npos) << prewarm.out;
  std::filesystem::remove(module);
}

}  // namespace
}  // namespace kiln::api::testing
