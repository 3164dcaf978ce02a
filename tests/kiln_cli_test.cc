// End-to-end tests of `kiln parse` and `kiln fingerprint`: output format,
// exit codes and error messages, as a user sees them.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

RunResult RunKiln(const std::string& args) {
  fs::path err_file = fs::temp_directory_path() / ("kiln_cli_err_" + std::to_string(getpid()));
  std::string cmd = std::string(KILN_BINARY) + " " + args + " 2>" + err_file.string();
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = pclose(pipe);
  std::ifstream ef(err_file);
  std::string err((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
}

class KilnCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

constexpr const char* kAdd = R"(HloModule add
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
)";

// Same graph: other names, metadata, whitespace, a comment.
constexpr const char* kAddRenamed = R"(HloModule other_name
// a comment
ENTRY %entry_comp {
  %x = f32[4]{0} parameter(0), metadata={op_name="x"}
  %y = f32[4] parameter(1)
  ROOT %sum   =  f32[4] add(%x, %y)
})";

TEST_F(KilnCliTest, FingerprintPrintsKeyAndPath) {
  std::string path = Write("add.hlo", kAdd);
  RunResult r = RunKiln("fingerprint " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("[0-9a-f]{32}  " + path + "\n"))) << r.out;
}

TEST_F(KilnCliTest, FingerprintIgnoresNamesMetadataAndWhitespace) {
  RunResult a = RunKiln("fingerprint " + Write("a.hlo", kAdd));
  RunResult b = RunKiln("fingerprint " + Write("b.hlo", kAddRenamed));
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_EQ(a.out.substr(0, 32), b.out.substr(0, 32));
}

TEST_F(KilnCliTest, FingerprintDependsOnChipAndShape) {
  std::string path = Write("add.hlo", kAdd);
  RunResult v5e = RunKiln("fingerprint " + path);
  RunResult v6e = RunKiln("fingerprint --chip v6e " + path);
  ASSERT_EQ(v6e.exit_code, 0) << v6e.err;
  EXPECT_NE(v5e.out.substr(0, 32), v6e.out.substr(0, 32));

  std::string wider = kAdd;
  for (size_t at; (at = wider.find("f32[4]")) != std::string::npos;) wider.replace(at, 6, "f32[5]");
  RunResult w = RunKiln("fingerprint " + Write("wider.hlo", wider));
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(v5e.out.substr(0, 32), w.out.substr(0, 32));
}

TEST_F(KilnCliTest, DefaultChipIsV5e) {
  std::string path = Write("add.hlo", kAdd);
  EXPECT_EQ(RunKiln("fingerprint " + path).out, RunKiln("fingerprint --chip v5e " + path).out);
}

TEST_F(KilnCliTest, ParseErrorNamesFileLineAndColumn) {
  std::string bad = Write("bad.hlo", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] add(a, a\n}\n");
  std::string good = Write("good.hlo", kAdd);
  RunResult r = RunKiln("fingerprint " + bad + " " + good);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(bad + ":5:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
  // The good file is still fingerprinted.
  EXPECT_NE(r.out.find(good), std::string::npos) << r.out;
}

TEST_F(KilnCliTest, VerifierErrorFailsFingerprint) {
  std::string bad = Write("mismatch.hlo",
                          "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
                          "  b = f32[5] parameter(1)\n  ROOT c = f32[4] add(a, b)\n}\n");
  RunResult r = RunKiln("fingerprint " + bad);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("%c"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(KilnCliTest, ParsePrintsCanonicalTextWithTheSameKey) {
  std::string path = Write("renamed.hlo", kAddRenamed);
  RunResult printed = RunKiln("parse " + path);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("metadata={op_name=\"x\"}"), std::string::npos) << printed.out;
  std::string reprinted_path = Write("printed.hlo", printed.out);
  RunResult again = RunKiln("parse " + reprinted_path);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(printed.out, again.out);  // canonical text is a fixed point
  EXPECT_EQ(RunKiln("fingerprint " + path).out.substr(0, 32),
            RunKiln("fingerprint " + reprinted_path).out.substr(0, 32));
}

TEST_F(KilnCliTest, MissingFileIsAnError) {
  RunResult r = RunKiln("fingerprint " + (dir_ / "nope.hlo").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nope.hlo"), std::string::npos) << r.err;
}

TEST_F(KilnCliTest, HelpListsCommands) {
  RunResult r = RunKiln("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fingerprint"), std::string::npos);
  EXPECT_NE(r.out.find("parse"), std::string::npos);
}

}  // namespace
