// The HLO modules in one found file: read (bounded), decompressed (zstd,
// gzip), sniffed and, for torch_xla's saved graphs, split into graphs.
//
// A file is a module when it is HLO text (its first token, after comments,
// is HloModule, or its name ends in .hlo), StableHLO text or MLIR bytecode
// (compiler/stablehlo/frontend.h); a saved graphs file holds one module per
// graph. Anything else is skipped with a reason: binary data,
// text that is not HLO, an empty or over-large file, corrupt compressed
// data, a graph cut off by the end of the file. Nothing here throws or
// stops a run; every outcome is a value. Thread-safe (one file per call).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tools/dump_walker.h"

namespace kiln::tools {

struct ModuleSource {
  std::string origin;  // for people: the path, and for a saved graph its label
  std::string file;    // the path, for file:line:col
  int first_line = 1;  // the file line the module's first line is on
  std::shared_ptr<const std::string> file_text;  // the decoded file, shared by its graphs
  std::string_view text;                         // the module's text, a view into file_text
};

struct FileModules {
  std::vector<ModuleSource> modules;
  std::vector<SkippedPath> skipped;
};

// `max_bytes` bounds the file on disk and after decompression.
FileModules ReadModuleSources(const FoundFile& file, StageFilter stage, uint64_t max_bytes);

// Whether the first token of `text`, after whitespace and // or /* */
// comments, is "HloModule".
bool LooksLikeHloText(std::string_view text);

}  // namespace kiln::tools
