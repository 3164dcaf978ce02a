// An HTTP response as handlers build it.
//
// Bodies are shared immutable bytes, so a cached executable can be answered
// without copying it: the transport holds the shared_ptr until the socket
// write completes. The transport adds Content-Length, Date, Connection and
// (when it compresses) Content-Encoding/Vary; handlers set the rest.
// Plain data: movable, copyable (copies share the body), thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/http/header_map.h"

namespace kiln::http {

using Bytes = std::shared_ptr<const std::string>;

inline Bytes MakeBytes(std::string data) {
  return std::make_shared<const std::string>(std::move(data));
}

struct Response {
  int status = 200;
  std::string content_type;  // empty: no Content-Type field
  HeaderMap headers;         // extra fields (Retry-After, Allow, ETag, ...)
  Bytes body;                // null means empty
  // Optional: the same body already zstd-compressed (e.g. a cache blob). Sent
  // as-is when the client accepts zstd, so the hot path never compresses.
  Bytes zstd_body;
  // Whether the transport may zstd-compress `body` for clients that accept it.
  bool compressible = true;
  // For HEAD only: the Content-Length to announce (the size GET would send)
  // without building a body. Ignored for other methods, where the length is
  // always the body's.
  std::optional<uint64_t> head_content_length;

  static Response Text(int status, std::string text,
                       std::string content_type = "text/plain; charset=utf-8");
  static Response WithBytes(int status, Bytes body, std::string content_type);

  std::string_view body_view() const { return body ? std::string_view(*body) : std::string_view(); }
  size_t body_size() const { return body ? body->size() : 0; }
};

// The reason phrase for a status code ("Not Found"); "Unknown" for others.
std::string_view StatusReason(int status);

}  // namespace kiln::http
