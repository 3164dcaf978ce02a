// The corpus's training graphs as the tuning benches read them: a module
// parsed and verified from its file, and a short name for a table row.
// Header-only for the benches under bench/; pure functions, thread-safe.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "compiler/hlo/module.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"

namespace kiln::bench {

// The module in `path`, or null when it does not parse or verify.
inline std::unique_ptr<hlo::Module> LoadTrainingGraph(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto module = hlo::ParseModule(text.str(), path.filename().string());
  if (!module || !hlo::VerifyModule(**module)) return nullptr;
  return std::move(*module);
}

// The file name without `.hlo` and the corpus's source prefixes, at most
// `width` characters.
inline std::string ShortGraphName(std::string name, size_t width) {
  if (name.ends_with(".hlo")) name.resize(name.size() - 4);
  for (std::string_view prefix : {"GraphHelper__", "tools__benchmarks__hlo__"}) {
    if (name.starts_with(prefix)) name = name.substr(prefix.size());
  }
  return name.size() <= width ? name : name.substr(0, width);
}

}  // namespace kiln::bench
