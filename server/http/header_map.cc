#include "server/http/header_map.h"

#include <algorithm>

namespace kiln::http {
namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "q=0", "q=0.0", "q=0.000" -> true. Anything else (absent, malformed) keeps
// the token acceptable, as RFC 9110 section 12.4.2 defaults q to 1.
bool HasZeroQuality(std::string_view params) {
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view param = TrimSpaces(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() < 2 || ToLowerAscii(param[0]) != 'q' || param[1] != '=') continue;
    std::string_view value = param.substr(2);
    return !value.empty() && value.find_first_not_of("0.") == std::string_view::npos;
  }
  return false;
}

}  // namespace

bool ListHasToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view element = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    size_t semi = element.find(';');
    std::string_view name = TrimSpaces(element.substr(0, semi));
    if (!EqualsIgnoreCase(name, token)) continue;
    if (semi == std::string_view::npos) return true;
    return !HasZeroQuality(element.substr(semi + 1));
  }
  return false;
}

void HeaderMap::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void HeaderMap::Set(std::string name, std::string value) {
  Remove(name);
  Add(std::move(name), std::move(value));
}

void HeaderMap::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const Field& f) { return EqualsIgnoreCase(f.first, name); });
}

std::optional<std::string_view> HeaderMap::Get(std::string_view name) const {
  for (const Field& f : fields_) {
    if (EqualsIgnoreCase(f.first, name)) return std::string_view(f.second);
  }
  return std::nullopt;
}

}  // namespace kiln::http
