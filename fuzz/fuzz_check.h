// How a harness reports a broken contract that is not a crash (a round
// trip that changes a value, a verified module without a key): the message
// on stderr, then __builtin_trap, so libFuzzer keeps the input as a crash.
// Header-only; fuzz/ only.
#pragma once

#include <cstdio>
#include <string>

namespace kiln::fuzz {

[[noreturn]] inline void FailCheck(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz check failed: %s: %s\n", what, detail.c_str());
  __builtin_trap();
}

}  // namespace kiln::fuzz
