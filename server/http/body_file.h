// A response body's bytes also held in a sealed in-memory file, so the
// transport can hand the socket page references with sendfile(2) instead of
// copying the bytes in (what nginx does for static files).
//
// Made once per cached executable, off the loop thread; immutable after
// (the memfd is sealed against writes, growing and shrinking). Owns its
// descriptor and closes it on destruction; holders share it with
// shared_ptr, and pages already handed to the kernel stay valid after that.
// Thread-safe (immutable).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "compiler/hlo/status.h"

namespace kiln::http {

class BodyFile {
 public:
  // Copies `bytes` into a new sealed memfd; fails with the system error.
  static Result<std::shared_ptr<const BodyFile>> FromBytes(std::string_view bytes);
  ~BodyFile();

  BodyFile(const BodyFile&) = delete;
  BodyFile& operator=(const BodyFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  BodyFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  const int fd_;
  const uint64_t size_;
};

}  // namespace kiln::http
