#include "server/http/url.h"

#include "base/str_cat.h"

namespace kiln::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Status ParseQuery(std::string_view query, Params& out) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    KILN_ASSIGN_OR_RETURN(std::string decoded_name, PercentDecode(name, true));
    KILN_ASSIGN_OR_RETURN(std::string decoded_value, PercentDecode(value, true));
    out.emplace_back(std::move(decoded_name), std::move(decoded_value));
  }
  return Ok();
}

}  // namespace

std::optional<std::string_view> FindParam(const Params& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

Result<std::string> PercentDecode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else if (c != '%') {
      out.push_back(c);
    } else {
      int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      int lo = hi >= 0 ? HexValue(text[i + 2]) : -1;
      if (lo < 0) {
        return InvalidArgumentError(StrCat("bad percent-escape at offset ", i, " of \"", text, "\""));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return out;
}

Result<ParsedTarget> ParseTarget(std::string_view target) {
  if (target.empty() || target.front() != '/') {
    return InvalidArgumentError(StrCat("request target \"", target, "\" is not an absolute path"));
  }
  ParsedTarget parsed;
  size_t question = target.find('?');
  parsed.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    std::string_view query = target.substr(question + 1);
    query = query.substr(0, query.find('#'));
    KILN_RETURN_IF_ERROR(ParseQuery(query, parsed.query));
  }
  return parsed;
}

}  // namespace kiln::http
