// Test support: the StableHLO corpus (../shared/stablehlo beside the HLO
// corpus KILN_CORPUS_DIR points at) and helpers the front end's tests share.
// Header-only, for *_test.cc files.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/test_corpus.h"
#include "compiler/hlo/verifier.h"
#include "compiler/stablehlo/frontend.h"

namespace kiln::stablehlo::testing {

// jax/ holds 1627 modules, dynamic/ 271, quantized/ 88, vhlo/ 22 pairs;
// the floors fail a missing or partial corpus loudly.
inline constexpr size_t kMinJaxModules = 1600;
inline constexpr size_t kMinDynamicModules = 250;
inline constexpr size_t kMinQuantizedModules = 80;
inline constexpr size_t kMinVhloArtifacts = 20;

inline std::filesystem::path StablehloRoot() {
  return std::filesystem::path(KILN_CORPUS_DIR).parent_path() / "stablehlo";
}

// Files of <root>/<folder> ending in `suffix`, sorted.
inline std::vector<std::filesystem::path> Files(std::string_view folder, std::string_view suffix = ".mlir") {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(StablehloRoot() / folder, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && name.ends_with(suffix)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The key of `bytes` parsed by ParseAnyModule and verified; an error
// otherwise.
inline Result<hlo::Hash128> KeyOf(std::string_view bytes, std::string_view name = "test.mlir") {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, ParseAnyModule(bytes, name));
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module));
  KILN_ASSIGN_OR_RETURN(hlo::Fingerprint fp, hlo::FingerprintModule(*module, {}));
  return fp.key;
}

// The module ParseAnyModule makes of `mlir`, verified and printed as HLO
// text; "error: ..." or "verify: ..." when it fails.
inline std::string ConvertedHloText(std::string_view mlir, std::string_view name = "t.mlir") {
  auto module = ParseAnyModule(mlir, name);
  if (!module) return "error: " + module.error().ToString();
  Status verified = hlo::VerifyModule(**module);
  if (!verified) return "verify: " + verified.error().ToString();
  return hlo::PrintModule(**module);
}

inline bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace kiln::stablehlo::testing
