// A real `kiln serve` process for end-to-end tests, on 127.0.0.1.
//
// Started through /bin/sh (so a test can lower its limits first, e.g.
// "ulimit -n 64;"), with its standard output and error in files of the
// test's directory. The destructor stops it: SIGTERM, then SIGKILL if it
// has not exited within 15 s. Header-only; not thread-safe except Call,
// which opens one connection per request.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include "server/http/testing/raw_http_client.h"

namespace kiln::api::testing {

class ServeProcess {
 public:
  // Runs `[shell_prefix] exec kiln serve ARGS` (ARGS as shell words).
  ServeProcess(std::filesystem::path dir, const std::string& args, const std::string& shell_prefix = "")
      : dir_(std::move(dir)) {
    const std::string command = shell_prefix + " exec " + KILN_BINARY + " serve " + args + " >" +
                                (dir_ / "serve.out").string() + " 2>" + (dir_ / "serve.err").string();
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    EXPECT_GT(pid_, 0) << "fork failed";
  }
  ~ServeProcess() { Stop(); }

  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // The port from the start line, once it is printed; 0 when the process
  // exited first or nothing was printed within `timeout`.
  uint16_t WaitUntilServing(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    static const std::regex kStartLine(R"(kiln serving on http://127\.0\.0\.1:(\d+) )");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline && running()) {
      std::smatch match;
      std::string out = Read("serve.out");
      if (std::regex_search(out, match, kStartLine)) return port_ = static_cast<uint16_t>(std::stoi(match[1]));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

  // SIGTERM, then the exit status once it exited (-1 when it had to be
  // killed or died of a signal).
  int Stop() {
    if (Poll()) return exit_status_;
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!Poll()) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
        exited_ = true;
        exit_status_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exit_status_;
  }

  // Waits up to `timeout` for the process to exit by itself; its exit
  // status, or nullopt while it still runs.
  std::optional<int> WaitForExit(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Poll() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exited_ ? std::optional<int>(exit_status_) : std::nullopt;
  }

  // One request on a new connection to the port WaitUntilServing found.
  http::testing::RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {},
                                  std::string_view headers = {}) const {
    EXPECT_NE(port_, 0) << "Call before WaitUntilServing found the port";
    Result<http::testing::RawResponse> response =
        http::testing::RoundTripOnce(port_, method, target, body, headers);
    EXPECT_TRUE(response) << method << " " << target << ": " << response.error().ToString();
    return response ? std::move(*response) : http::testing::RawResponse{};
  }

  pid_t pid() const { return pid_; }
  bool running() { return !Poll(); }
  std::string Stderr() const { return Read("serve.err"); }

 private:
  std::string Read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Reaps the process if it exited; whether it has.
  bool Poll() {
    if (exited_ || pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exited_ = true;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool exited_ = false;
  int exit_status_ = -1;
};

}  // namespace kiln::api::testing
