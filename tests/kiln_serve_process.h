// The real `kiln serve` binary as a child process on 127.0.0.1 with an
// ephemeral port and a fresh database in a temporary directory, for the
// end-to-end tests that need the command line, its flags and its signals.
// Header-only test code; not thread-safe except Call, which opens one
// connection per request. The destructor kills and reaps a server still
// running, so a failing test never leaves one behind.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/http/testing/raw_http_client.h"

namespace kiln::api::testing {

class KilnServeProcess {
 public:
  // Starts `kiln serve --listen 127.0.0.1:0 --db DIR/kiln.db --access-log off`
  // plus `flags`, and waits (up to 30 s) for its start line.
  explicit KilnServeProcess(std::vector<std::string> flags) {
    char pattern[] = "/tmp/kiln-serve-process-XXXXXX";
    dir_ = mkdtemp(pattern);
    const std::string out = (dir_ / "stdout").string();
    std::vector<std::string> args = {
        KILN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", (dir_ / "kiln.db").string(), "--access-log", "off"};
    args.insert(args.end(), flags.begin(), flags.end());
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, STDOUT_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (port_ == 0 && std::chrono::steady_clock::now() < give_up && !Exited()) {
      unsigned port = 0;
      if (FILE* f = std::fopen(out.c_str(), "r")) {
        if (std::fscanf(f, "kiln serving on http://127.0.0.1:%u", &port) == 1) port_ = static_cast<uint16_t>(port);
        std::fclose(f);
      }
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_NE(port_, 0) << "kiln serve did not start";
  }

  ~KilnServeProcess() {
    if (!exit_status_ && pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  KilnServeProcess(const KilnServeProcess&) = delete;
  KilnServeProcess& operator=(const KilnServeProcess&) = delete;

  bool ok() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The server's database file (removed with the process's directory).
  std::filesystem::path db_path() const { return dir_ / "kiln.db"; }
  // What the server printed on standard output so far (its start line first).
  std::string output() const {
    std::ifstream in(dir_ / "stdout");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // One request on a new connection (bounded by `timeout`).
  http::testing::RawResponse Call(std::string_view method, std::string_view target, std::string_view body = {},
                                  std::string_view headers = {},
                                  std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    Result<http::testing::RawResponse> response =
        http::testing::RoundTripOnce(port_, method, target, body, headers, timeout);
    EXPECT_TRUE(response) << method << " " << target << ": " << response.error().ToString();
    return response ? std::move(*response) : http::testing::RawResponse{};
  }

  void Signal(int signal) const { kill(pid_, signal); }

  // Whether the server still runs (reaps it once it has exited), and how
  // it exited then.
  bool running() { return !Exited(); }
  std::optional<int> exit_status() const { return exit_status_; }

  // The exit status once the server has exited, waiting up to `timeout`;
  // nullopt if it is still running then.
  std::optional<int> WaitForExit(std::chrono::milliseconds timeout) {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    while (!Exited() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exit_status_;
  }

 private:
  // Reaps the child if it has exited (so no zombie lingers).
  bool Exited() {
    if (exit_status_) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::optional<int> exit_status_;
};

}  // namespace kiln::api::testing
