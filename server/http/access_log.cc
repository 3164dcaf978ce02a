#include "server/http/access_log.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "base/str_cat.h"

namespace kiln::http {

std::string FormatAccessLine(const AccessRecord& record) {
  std::string line =
      StrCat(record.peer, " \"", record.method, " ", record.target, "\" ", record.status, " ",
             record.body_bytes, " ", FixedDecimal(record.seconds * 1e3, 3),
             "ms route=", record.route.empty() ? std::string_view("-") : record.route);
  if (record.zstd) line += " enc=zstd";
  return line;
}

AccessLogSink StderrAccessLog() {
  return [](std::string_view line) {
    // One write(2) per line, without copying it: lines from several loop
    // threads do not interleave (stderr is unbuffered anyway).
    iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {const_cast<char*>("\n"), 1}};
    ssize_t written;
    do {
      written = ::writev(STDERR_FILENO, parts, 2);
    } while (written < 0 && errno == EINTR);
  };
}

}  // namespace kiln::http
