#include "cache/shared/resp_framing.h"

#include <charconv>
#include <string>
#include <vector>

namespace kiln::cache::shared {
namespace {

Error Malformed(size_t at, std::string_view what) {
  return InvalidArgumentError("malformed reply at byte " + std::to_string(at) + ": " + std::string(what));
}

// The line starting at `at` (without its CRLF); `at` moves past the CRLF.
Result<std::string_view> Line(std::string_view bytes, size_t& at) {
  const size_t end = bytes.find("\r\n", at);
  if (end == std::string_view::npos) return std::unexpected(Malformed(at, "a line without CRLF"));
  std::string_view line = bytes.substr(at, end - at);
  at = end + 2;
  return line;
}

Result<long long> Length(std::string_view text, size_t at) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < -1) {
    return std::unexpected(Malformed(at, "length '" + std::string(text) + "' is not a count"));
  }
  return value;
}

// Reads `count` values from `bytes[at...]`, moving `at` past them. Sets
// `incomplete` (and fails) when the bytes end before the values do.
Status ScanValues(std::string_view bytes, size_t count, size_t& at, bool& incomplete) {
  incomplete = false;
  // Values still to read at each open level; the outermost is the replies.
  std::vector<long long> open = {static_cast<long long>(count)};
  auto early = [&](size_t where, std::string_view what) {
    incomplete = true;
    return Malformed(where, what);
  };
  while (!open.empty()) {
    if (open.back() == 0) {
      open.pop_back();
      continue;
    }
    --open.back();
    if (at >= bytes.size()) return early(at, "the replies end early");
    const size_t start = at;
    const char type = bytes[at++];
    Result<std::string_view> line = Line(bytes, at);
    if (!line) return early(at, "a line without CRLF");
    switch (type) {
      case '+':
      case '-':
      case ':':
        break;
      case '$': {
        KILN_ASSIGN_OR_RETURN(long long length, Length(*line, start + 1));
        if (length < 0) break;  // nil
        if (static_cast<unsigned long long>(length) > bytes.size() - at) return early(at, "a bulk string ends early");
        at += static_cast<size_t>(length);
        if (bytes.size() - at < 2) return early(at, "a bulk string ends early");
        if (bytes.substr(at, 2) != "\r\n") return Malformed(at, "a bulk string of " + std::to_string(length) +
                                                                    " bytes is not followed by CRLF");
        at += 2;
        break;
      }
      case '*': {
        KILN_ASSIGN_OR_RETURN(long long elements, Length(*line, start + 1));
        if (elements <= 0) break;  // nil or empty
        if (open.size() > static_cast<size_t>(kMaxRespDepth)) return Malformed(start, "arrays nested too deep");
        open.push_back(elements);
        break;
      }
      default:
        return Malformed(start, std::string("unknown reply type '") + type + "'");
    }
  }
  return Ok();
}

}  // namespace

Status CheckRespFraming(std::string_view bytes, size_t count) {
  size_t at = 0;
  bool incomplete = false;
  KILN_RETURN_IF_ERROR(ScanValues(bytes, count, at, incomplete));
  if (at != bytes.size()) return Malformed(at, std::to_string(bytes.size() - at) + " bytes after the last reply");
  return Ok();
}

Result<std::optional<size_t>> RespValueLength(std::string_view bytes) {
  size_t at = 0;
  bool incomplete = false;
  Status scanned = ScanValues(bytes, 1, at, incomplete);
  if (!scanned) {
    if (incomplete) return std::optional<size_t>();
    return std::unexpected(scanned.error());
  }
  return std::optional<size_t>(at);
}

}  // namespace kiln::cache::shared
