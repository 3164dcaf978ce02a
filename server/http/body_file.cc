#include "server/http/body_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/http/str_cat.h"

namespace kiln::http {

Result<std::shared_ptr<const BodyFile>> BodyFile::FromBytes(std::string_view bytes) {
  const int fd = ::memfd_create("kiln-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return MakeError(StrCat("memfd_create: ", std::strerror(errno)));
  std::shared_ptr<const BodyFile> file(new BodyFile(fd, bytes.size()));  // closes fd on failure
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return MakeError(StrCat("writing a ", bytes.size(), "-byte memfd: ", std::strerror(errno)));
    written += static_cast<size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    return MakeError(StrCat("sealing a memfd: ", std::strerror(errno)));
  }
  return file;
}

BodyFile::~BodyFile() { ::close(fd_); }

}  // namespace kiln::http
