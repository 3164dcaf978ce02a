// The crashers the fuzz harnesses found, kept under
// fuzz/regressions/<harness>/<name> (scripts/fuzz.sh seeds each harness
// with its own), for the unit tests beside the code they crashed: each
// test reads its input here and replays it the way the harness did.
// Header-only; tests only (KILN_FUZZ_REGRESSIONS_DIR comes from
// cmake/KilnLibrary.cmake).
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace kiln::fuzz {

// The bytes of fuzz/regressions/<harness>/<name>; empty when the file is
// missing (the test's own checks then fail).
inline std::string RegressionInput(std::string_view harness, std::string_view name) {
  std::string path = std::string(KILN_FUZZ_REGRESSIONS_DIR) + "/" + std::string(harness) + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kiln::fuzz
