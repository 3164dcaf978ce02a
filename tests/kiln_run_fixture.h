// Test fixture for the `kiln run` end-to-end tests: a scratch directory,
// file writers, and a runner for the real binary that captures stdout,
// stderr and the exit code. Header-only; test code.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/io/safetensors.h"
#include "tests/run_kiln.h"

namespace kiln::testing {

namespace fs = std::filesystem;
using runtime::io::SafetensorsFile;

class KilnRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_run_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  std::string WriteTensors(const std::string& name,
                           std::vector<std::pair<std::string, const char*>> tensors) {
    SafetensorsFile file;
    for (const auto& [tensor_name, literal] : tensors) {
      auto value = hlo::ParseLiteral(literal);
      EXPECT_TRUE(value) << value.error().ToString();
      file.tensors.push_back({tensor_name, *value});
    }
    EXPECT_TRUE(runtime::io::WriteSafetensorsFile(Path(name), file));
    return Path(name);
  }

  RunResult Run(const std::string& args) { return Kiln("run " + args); }

  RunResult Kiln(const std::string& args) { return RunKiln(args); }

  fs::path dir_;
};

// One line on stderr, "kiln run: ..." containing `substring`, exit code 1.
inline void ExpectError(const RunResult& r, const std::string& substring) {
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.err.starts_with("kiln run: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(substring), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace kiln::testing
