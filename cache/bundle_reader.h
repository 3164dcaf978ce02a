// BundleReader: a bundle (bundle.h) read from start to end, one item at a
// time, with every check DecodeBundle makes (versions, item and manifest
// checksums, every field, every executable). It holds one item at a time (an
// entry's compressed and raw executable), so a bundle of any size is read in
// memory bounded by its largest entry; a length field cannot make it
// allocate more than the bytes really there (plus a 16 MiB read chunk).
//
// Errors name the item and what is wrong (DataLoss, FailedPrecondition for
// versions), as DecodeBundle's; after one, the reader is done. The manifest
// comes last, so a reader knows the bundle whole only when Next has answered
// nullopt: a caller that must not act on part of a bundle reads it through
// once before acting. Thread-compatible; movable.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "cache/bundle.h"

namespace kiln::cache {

class BundleReader {
 public:
  // Reads up to `n` bytes into `out`; how many (0 at the end), or an error.
  using Source = std::function<Result<size_t>(char* out, size_t n)>;
  // The bytes of `bytes`, which must outlive the reader.
  static Source BytesSource(std::string_view bytes);
  // `file` from where it stands; the caller keeps and closes it.
  static Source FileSource(std::FILE* file, std::string name);

  // Reads and checks the header: the versions DecodeBundle accepts.
  static Result<BundleReader> Open(Source source, uint32_t max_schema_version,
                                   ExecutableVerifier verify = VerifyProgramBytes);

  // The header's versions (no entries or records).
  const Bundle& versions() const { return versions_; }

  using Item = std::variant<BundleEntry, TuningRecord>;
  // The next entry or record; nullopt once the manifest has been read and
  // matches every item before it, and nothing follows it.
  Result<std::optional<Item>> Next();

  uint64_t bytes_read() const { return offset_; }

 private:
  BundleReader(Source source, ExecutableVerifier verify);
  Result<std::optional<Item>> ReadItem();
  Result<size_t> ReadUpTo(char* out, size_t n);
  Status ReadExactly(char* out, size_t n, const std::string& what);
  Result<std::string> ReadPayload(uint64_t length, const std::string& what);
  Status CheckManifest(std::string_view payload) const;

  Source source_;
  ExecutableVerifier verify_;
  int64_t now_ms_;  // times past a day from now are refused
  Bundle versions_;
  uint64_t offset_ = 0;
  uint64_t entries_ = 0;
  uint64_t records_ = 0;
  std::vector<uint64_t> checksums_;  // of the items read, for the manifest
  bool done_ = false;                // the manifest was read and matched
  bool failed_ = false;
};

}  // namespace kiln::cache
