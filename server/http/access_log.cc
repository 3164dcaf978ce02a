#include "server/http/access_log.h"

#include <cstdio>

#include "server/http/str_cat.h"

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
    std::string buffer;
    buffer.reserve(line.size() + 1);
    buffer.append(line).push_back('\n');
    std::fwrite(buffer.data(), 1, buffer.size(), stderr);
  };
}

}  // namespace kiln::http
