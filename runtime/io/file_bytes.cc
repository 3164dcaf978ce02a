#include "runtime/io/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/str_cat.h"

namespace kiln::runtime::io {

Result<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return InvalidArgumentError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) return InvalidArgumentError(path + ": cannot determine the file size");
  if (size > max_bytes) {
    return ResourceExhaustedError(
        StrCat(path, ": file is ", static_cast<int64_t>(size), " bytes, more than the limit of ", max_bytes));
  }
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), size)) return DataLossError(path + ": read failed");
  return bytes;
}

Status WriteFileBytes(const std::string& path, std::string_view bytes) {
  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return ErrnoError(errno, path + ": cannot create: " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      const int write_errno = errno;
      std::error_code ec;
      std::filesystem::remove(temp, ec);
      return ErrnoError(write_errno, path + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::string reason = ec.message();
    const int rename_errno = ec.value();
    std::filesystem::remove(temp, ec);
    return ErrnoError(rename_errno, path + ": cannot rename the temporary file into place: " + reason);
  }
  return Ok();
}

}  // namespace kiln::runtime::io
