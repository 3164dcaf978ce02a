// torch_xla's saved graphs file: what XLA_SAVE_TENSORS_FILE collects with
// XLA_SAVE_TENSORS_FMT=hlo, several graphs appended to one file (torch_xla
// opens it per device ordinal, so the name may end in ".0", ".1", ...).
//
// torch_xla/csrc/debug_util.cpp (SaveTensorsGraphInfo) appends one record
// per graph it compiles or executes:
//
//   [ScheduleSyncTensorsGraph]          <- the reason the graph was saved
//   TensorsGraphInfo:
//     mark_step (.../xla_model.py:1055) <- Python frames, indented
//
//   Hashes: (4fd0b0f3e6a1e5e8...)
//
//   ## BEGIN_GRAPH
//   HloModule SyncTensorsGraph.12, ...  <- the graph in the chosen format
//   ...
//   ## END_GRAPH
//
// Graphs are separated by the lines "## BEGIN_GRAPH" and "## END_GRAPH";
// between records there may also be "#OUTPUT_SHARDING_BEGIN" ...
// "#OUTPUT_SHARDING_END" blocks (output shardings), which are not graphs.
// With another format (text, dot, stablehlo) the graphs are not HLO text;
// the caller finds that out by parsing.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::tools {

struct SavedGraph {
  std::string label;      // "graph 2 [ScheduleSyncTensorsGraph]"
  std::string_view text;  // the graph, a view into the file's text
  int first_line = 1;     // the file line the graph's first line is on
  bool complete = true;   // false: the file ends before "## END_GRAPH"
};

// Whether `text` has a "## BEGIN_GRAPH" line.
bool IsSavedGraphsFile(std::string_view text);

// Every graph in `text`, in file order; views into `text`.
std::vector<SavedGraph> SplitSavedGraphs(std::string_view text);

}  // namespace kiln::tools
