// For benchmarks that compare configurations fixed per process (the kernels'
// ISA level, the host cores): run this same binary again in a child with
// some environment variables set or unset, wait for it, and say whether it
// exited 0. The child's output goes to the same stdout (flushed first).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace kiln::bench {

// `env`: (name, value) to set, or (name, nullopt) to unset. `args` follow
// the program name.
inline bool RunSelfInChild(const std::vector<std::pair<std::string, std::optional<std::string>>>& env,
                           const std::vector<std::string>& args) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return false;
  }
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    std::vector<char*> argv;
    std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::perror("execv /proc/self/exe");
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace kiln::bench
