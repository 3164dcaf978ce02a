// Loads the corpus (KILN_CORPUS_DIR/hlo) for the corpus fingerprint tests,
// and checks keys over the whole corpus: the chip and compile options count,
// and distinct modules mostly have distinct keys. Counts go to stdout.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_corpus_test_util.h"
#include "compiler/hlo/fingerprint_test_util.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo::fingerprint_testing {

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    namespace fs = std::filesystem;
    fs::path root = fs::path(KILN_CORPUS_DIR) / "hlo";
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(root, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".hlo") files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
    c->files = files.size();
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string rel = fs::relative(p, KILN_CORPUS_DIR).string();
      Result<std::unique_ptr<Module>> m = ParseModule(text, rel);
      if (!m) {
        c->unparsed.push_back(rel + ": " + m.error().message);
        continue;
      }
      Result<Fingerprint> fp = FingerprintModule(**m, {});
      if (!fp) {
        c->unparsed.push_back(rel + ": fingerprint: " + fp.error().message);
        continue;
      }
      c->modules.push_back({rel, text.size(), std::move(*m), std::move(*fp)});
    }
    return c;
  }();
  return *corpus;
}

void CheckCorpusSize(const Corpus& corpus) {
  ASSERT_GE(corpus.modules.size(), kMinCorpusModules)
      << "corpus at " << KILN_CORPUS_DIR << ": " << corpus.files << " .hlo files, "
      << corpus.unparsed.size() << " did not parse"
      << (corpus.unparsed.empty() ? "" : "; first: " + corpus.unparsed.front());
}

uint64_t SeedFor(const std::string& path, uint64_t salt) {
  return std::hash<std::string>{}(path) ^ (salt * 0x9e3779b97f4a7c15ULL);
}

// Fingerprint of text that must parse; failures are reported against `what`.
std::optional<Fingerprint> MustFingerprint(const std::string& text, const std::string& what) {
  Result<std::unique_ptr<Module>> m = ParseModule(text, what);
  if (!m) {
    ADD_FAILURE() << what << ": rewritten text does not parse: " << m.error().message;
    return std::nullopt;
  }
  Result<Fingerprint> fp = FingerprintModule(**m, {});
  if (!fp) {
    ADD_FAILURE() << what << ": fingerprint failed: " << fp.error().message;
    return std::nullopt;
  }
  return std::move(*fp);
}

TEST(FingerprintCorpusTest, ChipAndCompileOptionsChangeKey) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  FingerprintOptions chip;
  chip.chip = "v6e";
  FingerprintOptions opts;
  opts.compile_options = "fusion=off";
  size_t checked = 0;
  for (const CorpusModule& cm : corpus.modules) {
    Result<Fingerprint> a = FingerprintModule(*cm.module, chip);
    Result<Fingerprint> b = FingerprintModule(*cm.module, opts);
    ASSERT_TRUE(a && b) << cm.path;
    EXPECT_NE(a->key, cm.fp.key) << cm.path;
    EXPECT_NE(a->target, cm.fp.target) << cm.path;
    EXPECT_EQ(a->options, cm.fp.options) << cm.path;
    EXPECT_EQ(a->entry_body, cm.fp.entry_body) << cm.path;
    EXPECT_EQ(a->parameter_shapes, cm.fp.parameter_shapes) << cm.path;
    EXPECT_NE(b->key, cm.fp.key) << cm.path;
    EXPECT_NE(b->key, a->key) << cm.path;
    EXPECT_NE(b->options, cm.fp.options) << cm.path;
    EXPECT_EQ(b->target, cm.fp.target) << cm.path;
    EXPECT_EQ(b->entry_body, cm.fp.entry_body) << cm.path;
    ++checked;
  }
  std::cout << "[ sensitivity ] chip: " << checked << ", compile_options: " << checked << "\n";
  EXPECT_GE(checked, kMinCorpusModules);
}

// Different modules of the corpus mostly have different keys; modules that
// share one are listed so that a collision would be noticed.
TEST(FingerprintCorpusTest, DistinctModulesMostlyHaveDistinctKeys) {
  const Corpus& corpus = GetCorpus();
  CheckCorpusSize(corpus);
  std::map<Hash128, std::vector<const CorpusModule*>> by_key;
  for (const CorpusModule& cm : corpus.modules) by_key[cm.fp.key].push_back(&cm);
  size_t shared = 0;
  for (const auto& [key, mods] : by_key) {
    if (mods.size() < 2) continue;
    shared += mods.size();
    std::cout << "  same key " << key.Hex() << ":";
    for (const CorpusModule* cm : mods) std::cout << " " << cm->path;
    std::cout << "\n";
    // Same key, same entry parameter shapes (a cheap cross-check).
    for (const CorpusModule* cm : mods) {
      EXPECT_EQ(cm->fp.parameter_shape_text, mods[0]->fp.parameter_shape_text)
          << cm->path << " vs " << mods[0]->path;
    }
  }
  std::cout << "[ keys ] " << by_key.size() << " distinct keys over " << corpus.modules.size()
            << " modules (" << shared << " modules share a key with another)\n";
  // The corpus holds some duplicates (the same test module in two files),
  // but most modules differ.
  EXPECT_GE(by_key.size(), corpus.modules.size() * 8 / 10);
}

}  // namespace kiln::hlo::fingerprint_testing
