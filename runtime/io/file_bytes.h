// Whole-file reads and writes for the tensor file formats. Errors name the
// path and the OS reason. Thread-safe (no shared state); concurrent writers
// of one path race as with any file.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime::io {

// The file's bytes. Refuses files larger than `max_bytes`.
Result<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes = int64_t{1} << 36);

// Writes `bytes` to `path` through a temporary file in the same directory
// renamed over it, so a reader never sees a partial file.
Status WriteFileBytes(const std::string& path, std::string_view bytes);

}  // namespace kiln::runtime::io
