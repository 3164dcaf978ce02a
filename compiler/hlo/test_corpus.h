// Test support: the HLO corpus the tests walk (KILN_CORPUS_DIR, a compile
// definition of the unit-test binary). Header-only, for *_test.cc files.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::hlo::testing {

inline std::filesystem::path CorpusRoot() { return std::filesystem::path(KILN_CORPUS_DIR); }

// Every <root>/hlo/**/*.hlo, sorted; empty when the corpus is missing (tests
// assert a minimum count so that a missing corpus fails loudly).
inline const std::vector<std::filesystem::path>& CorpusModules() {
  namespace fs = std::filesystem;
  static const std::vector<fs::path> files = [] {
    std::vector<fs::path> out;
    std::error_code ec;
    fs::path dir = CorpusRoot() / "hlo";
    if (!fs::is_directory(dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".hlo") out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return files;
}

// The whole file; empty if it cannot be read.
inline std::string ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kiln::hlo::testing
