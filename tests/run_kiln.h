// Runs the real `kiln` binary with a shell command line and captures its
// standard output, standard error and exit code, for end-to-end tests.
// Header-only test code; one call at a time per process (the stderr file
// is named after the process).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace kiln::testing {

struct RunResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `kiln ARGS` (ARGS as shell words).
// `shell_prefix` runs first in the same shell ("ulimit -v 600000; ").
inline RunResult RunKiln(const std::string& args, const std::string& shell_prefix = "") {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("kiln_test_err_" + std::to_string(getpid()));
  const std::string cmd = shell_prefix + std::string(KILN_BINARY) + " " + args + " 2>" + err_file.string();
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::ifstream ef(err_file);
  std::string err((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
}

}  // namespace kiln::testing
