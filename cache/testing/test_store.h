// Helpers for the cache tests: a temporary directory removed on
// destruction and ready-made entries. Header-only; not thread-safe.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "cache/entry.h"

namespace kiln::cache::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-cache-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline EntryId TestId(uint64_t n, std::string tenant = "alice", std::string chip = "v5e") {
  return EntryId{std::move(tenant), Hash128{n, n * 31 + 7}, std::move(chip), kCompilerFormatVersion};
}

// Executable-like bytes: a repeated header plus varying content.
inline std::string TestExecutable(uint64_t n, size_t size = 4096) {
  std::string bytes;
  bytes.reserve(size);
  uint64_t state = n * 0x9e3779b97f4a7c15ULL + 3;
  while (bytes.size() < size) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    bytes += (bytes.size() / 64) % 2 == 0 ? std::string("KILNEXEC") : std::to_string(state >> 33);
  }
  bytes.resize(size);
  return bytes;
}

// Incompressible bytes: stored size is about the raw size.
inline std::string RandomBytes(uint64_t seed, size_t size) {
  std::string bytes(size, '\0');
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 0x1234567;
  for (char& c : bytes) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    c = static_cast<char>(state >> 24);
  }
  return bytes;
}

// The request views `executable`, which must outlive it.
inline PutRequest TestPut(const EntryId& id, std::string_view executable, double compile_seconds = 10) {
  PutRequest request;
  request.id = id;
  request.options = "opt_level=2";
  request.plan_kind = PlanKind::kHeuristic;
  request.executable = executable;
  request.compile_seconds = compile_seconds;
  request.device_seconds = 0.001;
  return request;
}

}  // namespace kiln::cache::testing
