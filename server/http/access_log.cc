#include "server/http/access_log.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "base/clock.h"
#include "base/str_cat.h"

namespace kiln::http {

namespace {

// "2026-12-01T10:30:00.214Z". The date part is formatted once a second per
// thread (the loop threads log concurrently).
std::string UtcTime(int64_t unix_ms) {
  thread_local int64_t cached_second = -1;
  thread_local char cached[32];
  const int64_t second = unix_ms / 1000;
  if (second != cached_second) {
    const std::time_t t = static_cast<std::time_t>(second);
    std::tm utc{};
    gmtime_r(&t, &utc);
    std::strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &utc);
    cached_second = second;
  }
  char text[48];
  std::snprintf(text, sizeof(text), "%s.%03dZ", cached, static_cast<int>(unix_ms % 1000));
  return text;
}

}  // namespace

std::string FormatAccessLine(const AccessRecord& record) {
  const int64_t unix_ms =
      record.unix_ms != 0
          ? record.unix_ms
          : UnixNowMs();
  std::string line =
      StrCat(UtcTime(unix_ms), " ", record.peer, " \"", record.method, " ", record.target, "\" ", record.status, " ",
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
