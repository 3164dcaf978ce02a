#include "tools/saved_graphs.h"

namespace kiln::tools {
namespace {

constexpr std::string_view kBegin = "## BEGIN_GRAPH";
constexpr std::string_view kEnd = "## END_GRAPH";

std::string_view TrimRight(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line;
}

// Calls visit(line, line_number, offset) for each line; stops when it
// returns false.
template <typename Visit>
void ForEachLine(std::string_view text, Visit visit) {
  size_t at = 0;
  int number = 1;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    if (!visit(TrimRight(text.substr(at, end - at)), number, at)) return;
    at = end + 1;
    ++number;
  }
}

}  // namespace

bool IsSavedGraphsFile(std::string_view text) {
  bool found = false;
  ForEachLine(text, [&](std::string_view line, int, size_t) {
    found = line == kBegin;
    return !found;
  });
  return found;
}

std::vector<SavedGraph> SplitSavedGraphs(std::string_view text) {
  std::vector<SavedGraph> graphs;
  std::string reason;  // the last "[NAME]" line seen
  bool inside = false;
  size_t graph_start = 0;
  auto label = [&] {
    std::string out = "graph " + std::to_string(graphs.size() + 1);
    if (!reason.empty()) out += " " + reason;
    return out;
  };
  ForEachLine(text, [&](std::string_view line, int number, size_t offset) {
    if (!inside) {
      if (line.size() > 2 && line.front() == '[' && line.back() == ']') reason = std::string(line);
      if (line == kBegin) {
        inside = true;
        const size_t newline = text.find('\n', offset);
        graph_start = newline == std::string_view::npos ? text.size() : newline + 1;
        graphs.push_back({.label = label(), .text = {}, .first_line = number + 1, .complete = false});
      }
      return true;
    }
    if (line == kEnd) {
      graphs.back().text = text.substr(graph_start, offset - graph_start);
      graphs.back().complete = true;
      inside = false;
      reason.clear();
    }
    return true;
  });
  if (inside) graphs.back().text = text.substr(graph_start);
  return graphs;
}

}  // namespace kiln::tools
