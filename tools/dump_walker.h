// The files `kiln prewarm` reads: PATH arguments walked recursively, and
// what their names say.
//
// Names as XLA's --xla_dump_to writes them (module_NNNN.NAME.SUFFIX,
// perhaps compressed) are classified by suffix: before_optimizations.txt
// is the module a trainer submits, *after_optimizations.txt (also with a
// backend prefix, e.g. cpu_after_optimizations) the optimized one, and
// every other dump file (buffer assignment, memory reports, .pb, .ll, .dot,
// ...) is not a module stage. Files whose extension is known not to be a
// module are skipped by name; the rest (StableHLO's .mlir and .mlir.bc
// among them) are read and sniffed by the caller.
//
// The walk never stops for one bad entry: unreadable folders, symlink
// loops (a folder reached twice), dangling links, sockets and FIFOs (never
// opened, so never blocking), empty folders and folders nested too deep
// are reported per path. Symlinks are followed. Not thread-safe (one walk
// per call); paths are visited in sorted order, so results are stable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tools {

enum class DumpStage { kBefore, kAfter, kUnstaged };  // kUnstaged: plain .hlo, saved graphs, ...

// Which stages --stage selects: before (the default, what trainers
// submit), after, or all. Unstaged files are always read.
enum class StageFilter { kBefore, kAfter, kAll };
inline bool StageSelected(DumpStage stage, StageFilter filter) {
  if (stage == DumpStage::kUnstaged || filter == StageFilter::kAll) return true;
  return (stage == DumpStage::kBefore) == (filter == StageFilter::kBefore);
}

struct FoundFile {
  std::string path;
  DumpStage stage = DumpStage::kUnstaged;
  uint64_t bytes = 0;  // on disk (compressed)
};

// A path not read as HLO and why. A `problem` is worth a line of its own
// (unreadable, loop, junk); the rest are only counted by reason.
struct SkippedPath {
  std::string path;
  std::string reason;
  bool problem = false;
};

struct WalkResult {
  std::vector<FoundFile> files;  // to read, in walk order
  std::vector<SkippedPath> skipped;
};

// Walks every path (a file or a folder) recursively.
WalkResult WalkDumpPaths(const std::vector<std::string>& paths);

// How a file name classifies (exposed for tests): whether the name alone
// says it is not a module, and otherwise its stage.
struct NameClass {
  bool skip = false;
  std::string reason;  // when skip
  DumpStage stage = DumpStage::kUnstaged;
};
NameClass ClassifyDumpName(const std::string& file_name);

}  // namespace kiln::tools
