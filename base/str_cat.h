// StrCat: concatenates strings and numbers (GCC 12 has no <format>), and
// the number formats messages use.
//
// Integers print in decimal; floating-point values in the shortest form
// that reads back to the same value (std::to_chars). Pure; thread-safe.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {
namespace str_cat_internal {

inline void Append(std::string& out, std::string_view text) { out.append(text); }
inline void Append(std::string& out, const char* text) { out.append(text); }
inline void Append(std::string& out, char c) { out.push_back(c); }

template <typename T>
requires(std::is_arithmetic_v<T> && !std::same_as<T, char> &&
         !std::same_as<T, bool>) void Append(std::string& out, T value) {
  char digits[64];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
}

}  // namespace str_cat_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (str_cat_internal::Append(out, args), ...);
  return out;
}

// `value` with `decimals` digits after the point ("0.214").
inline std::string FixedDecimal(double value, int decimals) {
  char digits[64];
  auto [end, ec] =
      std::to_chars(digits, digits + sizeof(digits), value, std::chars_format::fixed, decimals);
  return std::string(digits, end);
}

// `value` with up to `digits` significant digits, as printf's "%g" writes
// it ("0.333333", "1e+20").
inline std::string SignificantDigits(double value, int digits = 6) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

}  // namespace kiln
