#include "server/http/response_head.h"

#include <charconv>

#include "server/http/header_map.h"

namespace kiln::http::internal {
namespace {

constexpr std::string_view kTransportFields[] = {"Content-Length", "Content-Encoding", "Connection",
                                                 "Date", "Transfer-Encoding"};

bool IsTransportField(std::string_view name) {
  for (std::string_view field : kTransportFields) {
    if (EqualsIgnoreCase(name, field)) return true;
  }
  return false;
}

bool HasLineBreak(std::string_view text) { return text.find_first_of("\r\n") != text.npos; }

void AppendNumber(std::string& out, uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

bool StatusHasNoBody(int status) { return status < 200 || status == 204 || status == 304; }

std::string SerializeHead(const Response& response, const WireBody& wire,
                          const HeadOptions& options) {
  std::string out;
  AppendHead(response, wire, options, out);
  return out;
}

void AppendHead(const Response& response, const WireBody& wire, const HeadOptions& options,
                std::string& out) {
  out.reserve(out.size() + 256 + response.content_type.size());
  out.append("HTTP/1.1 ");
  AppendNumber(out, static_cast<uint64_t>(response.status));
  out.push_back(' ');
  out.append(StatusReason(response.status)).append("\r\n");
  AppendField(out, "Server", "kiln");
  if (!options.date.empty()) AppendField(out, "Date", options.date);
  if (!response.content_type.empty() && !HasLineBreak(response.content_type)) {
    AppendField(out, "Content-Type", response.content_type);
  }
  if (!StatusHasNoBody(response.status)) {
    uint64_t length = wire.bytes ? wire.bytes->size() : 0;
    if (options.head && !wire.bytes && response.head_content_length) {
      length = *response.head_content_length;
    }
    out.append("Content-Length: ");
    AppendNumber(out, length);
    out.append("\r\n");
  }
  if (wire.zstd) AppendField(out, "Content-Encoding", "zstd");
  if ((response.compressible && response.body_size() > 0) || response.zstd_body) {
    AppendField(out, "Vary", "Accept-Encoding");
  }
  if (!options.keep_alive) {
    AppendField(out, "Connection", "close");
  } else if (options.http10) {
    AppendField(out, "Connection", "keep-alive");
  }
  for (const auto& [name, value] : response.headers.fields()) {
    if (IsTransportField(name) || HasLineBreak(name) || HasLineBreak(value)) continue;
    AppendField(out, name, value);
  }
  out.append("\r\n");
}

}  // namespace kiln::http::internal
