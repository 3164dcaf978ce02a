// StrCat: builds error messages from strings and numbers (GCC 12 has no
// std::format). Integers print in decimal, floating-point values with up to
// 6 significant digits ("%g"). Pure; thread-safe.
#pragma once

#include <concepts>
#include <cstdio>
#include <string>
#include <string_view>

namespace kiln::runtime::io {
namespace str_cat_internal {

inline void Append(std::string& out, std::string_view s) { out.append(s); }
inline void Append(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) void Append(std::string& out, T v) {
  out += std::to_string(v);
}
template <std::floating_point T>
void Append(std::string& out, T v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", static_cast<double>(v));
  out += buffer;
}

}  // namespace str_cat_internal

template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  (str_cat_internal::Append(out, pieces), ...);
  return out;
}

}  // namespace kiln::runtime::io
