// A small blocking HTTP/1.1 client for the `kiln` command (kiln prewarm
// --server): one request per connection (Connection: close), plain http
// only (no TLS), responses framed by Content-Length, chunked encoding or
// the end of the connection. Every connect, send and receive is bounded by
// the timeout, so a stuck server fails the request instead of hanging it.
// Thread-safe: calls share nothing.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace kiln::tools {

struct HttpUrl {
  std::string host;       // name or address, without brackets
  std::string port = "80";
  std::string base_path;  // without a trailing '/', "" for the root
};

// "http://host[:port][/path]"; https is refused (no TLS here).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::string body;

  // The first header named `name` (lowercase), or "".
  std::string Header(std::string_view name) const;
};

// Sends `method` `base_path + target` with `headers` (full lines without
// CRLF, e.g. "Authorization: Bearer T") and `body`; reads the response.
Result<HttpResponse> HttpRoundTrip(const HttpUrl& url, std::string_view method, std::string_view target,
                                   const std::vector<std::string>& headers, std::string_view body,
                                   std::chrono::milliseconds timeout);

}  // namespace kiln::tools
