// Internal to kiln_http: the status line and header block of a response.
//
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "server/http/content_coding.h"
#include "server/http/response.h"

namespace kiln::http::internal {

struct HeadOptions {
  bool keep_alive = true;
  bool http10 = false;    // HTTP/1.0 keep-alive must be announced
  bool head = false;      // HEAD: Response::head_content_length may stand in for the body
  std::string_view date;  // IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT"
};

// Appends "HTTP/1.1 200 OK\r\n...\r\n\r\n" for `response`, whose body goes
// out as `wire`, to `out` (so one buffer can hold a batch of heads). The
// transport's own fields (Content-Length, Content-Encoding, Connection,
// Date) win over same-named fields a handler set; fields whose name or
// value holds CR or LF are dropped rather than split the response.
void AppendHead(const Response& response, const WireBody& wire, const HeadOptions& options,
                std::string& out);
// The same, as a new string.
std::string SerializeHead(const Response& response, const WireBody& wire,
                          const HeadOptions& options);

// Statuses that never carry a body (1xx, 204, 304).
bool StatusHasNoBody(int status);

}  // namespace kiln::http::internal
