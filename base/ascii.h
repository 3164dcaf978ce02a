// ASCII case folding, as HTTP header names, size suffixes and flag values
// compare (never the locale's). Pure; thread-safe.
#pragma once

#include <algorithm>
#include <string_view>

namespace kiln {

constexpr char ToLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ToLowerAscii(x) == ToLowerAscii(y); });
}

}  // namespace kiln
