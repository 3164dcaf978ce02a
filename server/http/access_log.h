// One line per answered request.
//
// The server formats an AccessRecord and hands the line (without a trailing
// newline) to an AccessLogSink on the loop thread that answered (with
// several loops, concurrently: a sink must be thread-safe); a sink must be
// cheap and must not block for long. An empty sink disables the log, and
// then nothing is formatted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kiln::http {

using AccessLogSink = std::function<void(std::string_view line)>;

struct AccessRecord {
  std::string_view peer;
  std::string_view method;
  std::string_view target;
  std::string_view route;  // matched pattern, or "-" when none matched
  int status = 0;
  uint64_t body_bytes = 0;  // bytes of body sent (after compression)
  double seconds = 0;       // first request byte to response queued
  bool zstd = false;
  int64_t unix_ms = 0;      // when it was answered (Unix ms); 0: now
};

// `2026-12-01T10:30:00.214Z 127.0.0.1:5123 "GET /v1/stats" 200 512 0.214ms
// route=/v1/stats enc=zstd`: the time in UTC with milliseconds first, so
// lines sort and match other logs.
std::string FormatAccessLine(const AccessRecord& record);

// Writes each line to stderr with a newline, one writev per line; callable
// from several loop threads at once.
AccessLogSink StderrAccessLog();

}  // namespace kiln::http
