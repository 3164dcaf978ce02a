#include "tools/module_sources.h"

#include <algorithm>
#include <cstring>

#include "base/str_cat.h"
#include "compiler/stablehlo/frontend.h"
#include "tools/compressed_text.h"
#include "tools/load_module.h"
#include "tools/saved_graphs.h"

namespace kiln::tools {
namespace {

// Text with a NUL byte in its first 64 KiB is binary.
bool LooksBinary(std::string_view text) {
  return text.substr(0, 64 << 10).find('\0') != std::string_view::npos;
}

bool NameEndsInHlo(const std::string& path) {
  const std::string_view name = StripCompressionSuffix(path);
  return name.size() >= 4 && name.substr(name.size() - 4) == ".hlo";
}

}  // namespace

bool LooksLikeHloText(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++at;
    } else if (text.substr(at, 2) == "//") {
      at = text.find('\n', at);
      if (at == std::string_view::npos) return false;
    } else if (text.substr(at, 2) == "/*") {
      at = text.find("*/", at + 2);
      if (at == std::string_view::npos) return false;
      at += 2;
    } else {
      return text.substr(at, 9) == "HloModule";
    }
  }
  return false;
}

FileModules ReadModuleSources(const FoundFile& file, StageFilter stage, uint64_t max_bytes) {
  FileModules out;
  auto skip = [&](std::string reason, bool problem) {
    out.skipped.push_back({file.path, std::move(reason), problem});
    return out;
  };
  if (!StageSelected(file.stage, stage)) {
    return skip(file.stage == DumpStage::kBefore ? "XLA dump, stage before_optimizations (not selected by --stage)"
                                                 : "XLA dump, stage after_optimizations (not selected by --stage)",
                false);
  }
  if (file.bytes > max_bytes) {
    return skip(StrCat("too large: ", file.bytes, " bytes (limit ", max_bytes, ", --max-file-bytes)"), true);
  }
  Result<std::string> raw = ReadFile(file.path);
  if (!raw) return skip("cannot read: " + raw.error().message, true);
  if (raw->empty()) return skip("empty file", true);
  const Compression compression = CompressionOf(*raw);
  std::shared_ptr<std::string> text;
  if (compression == Compression::kNone) {
    text = std::make_shared<std::string>(*std::move(raw));
  } else {
    Result<std::string> decoded = Decompress(*raw, compression, max_bytes);
    if (!decoded) return skip(decoded.error().message, true);
    text = std::make_shared<std::string>(*std::move(decoded));
    if (text->empty()) return skip(StrCat("empty file (", CompressionName(compression), ")"), true);
  }
  // StableHLO: MLIR bytecode (binary) and MLIR text are modules too.
  const stablehlo::ModuleFormat format = stablehlo::DetectModuleFormat(*text);
  if (format != stablehlo::ModuleFormat::kHloText) {
    out.modules.push_back({.origin = file.path, .file = file.path, .first_line = 1, .file_text = text, .text = *text});
    return out;
  }
  if (LooksBinary(*text)) return skip("binary data, not HLO text", true);

  if (IsSavedGraphsFile(*text)) {
    if (stage == StageFilter::kAfter) return skip("torch_xla saved graphs: stage before (not selected by --stage)", false);
    for (const SavedGraph& graph : SplitSavedGraphs(*text)) {
      if (!graph.complete) {
        out.skipped.push_back({StrCat(file.path, ":", graph.first_line), graph.label + " ends before ## END_GRAPH (file cut off)", true});
      } else if (!LooksLikeHloText(graph.text)) {
        out.skipped.push_back({StrCat(file.path, ":", graph.first_line),
                               "saved graph is not HLO text (XLA_SAVE_TENSORS_FMT other than hlo)", false});
      } else {
        out.modules.push_back({.origin = StrCat(file.path, " ", graph.label),
                               .file = file.path,
                               .first_line = graph.first_line,
                               .file_text = text,
                               .text = graph.text});
      }
    }
    return out;
  }
  if (!LooksLikeHloText(*text) && !NameEndsInHlo(file.path)) return skip("text without an HloModule header, not HLO", false);
  out.modules.push_back({.origin = file.path, .file = file.path, .first_line = 1, .file_text = text, .text = *text});
  return out;
}

}  // namespace kiln::tools
