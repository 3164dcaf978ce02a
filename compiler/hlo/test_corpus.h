// Test support: the HLO corpus the tests walk (KILN_CORPUS_DIR, a compile
// definition of the unit-test binary). Header-only, for *_test.cc files.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::hlo::testing {

// What the tests know about the corpus, in one place. The corpus
// (<root>/MANIFEST.tsv) lists 704 modules; the floors leave a little room so
// that a missing or partial corpus fails loudly, not vacuously.
//
// .hlo files under <root>/hlo.
inline constexpr size_t kMinCorpusModules = 700;
// Modules that parse but are not valid HLO: the allow-list in
// compiler/hlo/verifier_corpus_test.cc, which checks it has this many.
inline constexpr int kKnownInvalidModules = 10;
// Modules that parse and verify (so fingerprint, plan and compile).
inline constexpr size_t kMinValidCorpusModules = kMinCorpusModules - kKnownInvalidModules;
// *.expected.txt sidecars with arguments and results (tests/corpus_eval_test.cc).
inline constexpr int kExpectationFiles = 62;

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
