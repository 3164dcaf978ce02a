#include "tools/dump_walker.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "tools/compressed_text.h"

namespace kiln::tools {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 128;

// "module_0012." followed by at least one more character.
bool IsDumpModuleName(std::string_view name) {
  if (name.substr(0, 7) != "module_") return false;
  size_t at = 7;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9') ++at;
  return at > 7 && at + 1 < name.size() && name[at] == '.';
}

class Walker {
 public:
  WalkResult Take() { return std::move(result_); }

  void Visit(const fs::path& path, int depth) {
    struct stat link_info {};
    if (lstat(path.c_str(), &link_info) != 0) return Problem(path, std::string("cannot read: ") + std::strerror(errno));
    struct stat info = link_info;
    if (S_ISLNK(link_info.st_mode) && stat(path.c_str(), &info) != 0) {
      return Problem(path, errno == ELOOP ? "symlink loop" : std::string("dangling symlink: ") + std::strerror(errno));
    }
    if (S_ISDIR(info.st_mode)) return VisitFolder(path, info, depth);
    if (!S_ISREG(info.st_mode)) return Problem(path, "not a regular file (a FIFO, socket or device), not read");
    const NameClass name = ClassifyDumpName(path.filename().string());
    if (name.skip) {
      result_.skipped.push_back({path.string(), name.reason, false});
      return;
    }
    result_.files.push_back({path.string(), name.stage, static_cast<uint64_t>(info.st_size)});
  }

 private:
  void Problem(const fs::path& path, std::string reason) {
    result_.skipped.push_back({path.string(), std::move(reason), true});
  }

  void VisitFolder(const fs::path& path, const struct stat& info, int depth) {
    if (!visited_.insert({info.st_dev, info.st_ino}).second) {
      return Problem(path, "folder already walked (a symlink loop or a repeated path), not walked again");
    }
    if (depth > kMaxDepth) return Problem(path, "folders nested deeper than " + std::to_string(kMaxDepth) + ", not walked");
    std::error_code error;
    fs::directory_iterator it(path, error);
    if (error) return Problem(path, "cannot read folder: " + error.message());
    std::vector<fs::path> children;
    for (; it != fs::directory_iterator(); it.increment(error)) {
      if (error) break;
      children.push_back(it->path());
    }
    if (error) Problem(path, "folder listing stopped early: " + error.message());
    if (children.empty() && !error) {
      result_.skipped.push_back({path.string(), "empty folder", true});
      return;
    }
    std::sort(children.begin(), children.end());
    for (const fs::path& child : children) Visit(child, depth + 1);
  }

  WalkResult result_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

}  // namespace

NameClass ClassifyDumpName(const std::string& file_name) {
  const std::string_view name = StripCompressionSuffix(file_name);
  NameClass out;
  if (IsDumpModuleName(name)) {
    if (name.ends_with(".before_optimizations.txt") || name.ends_with(".before_optimizations.hlo")) {
      out.stage = DumpStage::kBefore;
    } else if (name.ends_with("after_optimizations.txt") || name.ends_with("after_optimizations.hlo")) {
      out.stage = DumpStage::kAfter;
    } else {
      out.skip = true;
      out.reason = "XLA dump file that is not a module stage (buffer assignment, report, proto, ...)";
    }
    return out;
  }
  static constexpr std::string_view kNotHlo[] = {
      ".pb", ".pbtxt", ".ll", ".dot", ".html", ".json", ".py", ".log", ".o", ".so", ".png", ".svg",
      ".md", ".csv", ".ptx", ".cubin", ".neff", ".kexe", ".db", ".sqlite", ".safetensors",
      "-wal", "-shm", "-journal", "-reserve"};  // SQLite's files beside a store, kiln's delete reserve
  for (std::string_view extension : kNotHlo) {
    if (name.ends_with(extension)) {
      out.skip = true;
      out.reason = "not HLO text (by its name)";
      return out;
    }
  }
  return out;
}

WalkResult WalkDumpPaths(const std::vector<std::string>& paths) {
  Walker walker;
  for (const std::string& path : paths) walker.Visit(path, 0);
  return walker.Take();
}

}  // namespace kiln::tools
