#include "base/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>

namespace kiln {
namespace {

Result<uint64_t> SuffixMultiplier(std::string_view suffix) {
  struct Unit {
    std::string_view name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},         {"b", 1},
      {"k", 1000},     {"kb", 1000},     {"kib", uint64_t{1} << 10},
      {"m", 1000'000}, {"mb", 1000'000}, {"mib", uint64_t{1} << 20},
      {"g", 1000'000'000},     {"gb", 1000'000'000},     {"gib", uint64_t{1} << 30},
      {"t", 1000'000'000'000}, {"tb", 1000'000'000'000}, {"tib", uint64_t{1} << 40},
  };
  for (const Unit& unit : kUnits) {
    if (EqualsIgnoreCase(suffix, unit.name)) return unit.factor;
  }
  return InvalidArgumentError("unknown size suffix '" + std::string(suffix) +
                              "' (use B, KiB, MiB, GiB, TiB, k, M, G, T)");
}

}  // namespace

Result<uint64_t> ParseUnsigned(std::string_view text, uint64_t max, std::string_view what) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return InvalidArgumentError(std::string(what) + ": expected a number up to " + std::to_string(max) + ", got '" +
                                std::string(text) + "'");
  }
  return value;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) {
    return InvalidArgumentError("size '" + std::string(text) + "': expected a number of bytes, e.g. 256MiB");
  }
  auto number = ParseUnsigned(text.substr(0, digits), std::numeric_limits<uint64_t>::max(),
                              "size '" + std::string(text) + "'");
  if (!number) return std::unexpected(number.error());
  auto factor = SuffixMultiplier(text.substr(digits));
  if (!factor) return InvalidArgumentError("size '" + std::string(text) + "': " + factor.error().ToString());
  if (*number > std::numeric_limits<uint64_t>::max() / *factor) {
    return InvalidArgumentError("size '" + std::string(text) + "' is too large");
  }
  return *number * *factor;
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto refuse = [&] {
    return InvalidArgumentError("duration '" + std::string(text) +
                                "': expected a positive time up to 24h such as 60s, 1.5s, 500ms or 2m");
  };
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
    ++digits;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (digits == 0 || ec != std::errc() || end != text.data() + digits) return refuse();
  const std::string_view unit = text.substr(digits);
  double ms_per_unit = 0;
  if (unit.empty() || EqualsIgnoreCase(unit, "s")) {
    ms_per_unit = 1000;
  } else if (EqualsIgnoreCase(unit, "ms")) {
    ms_per_unit = 1;
  } else if (EqualsIgnoreCase(unit, "m")) {
    ms_per_unit = 60'000;
  } else if (EqualsIgnoreCase(unit, "h")) {
    ms_per_unit = 3'600'000;
  } else {
    return refuse();
  }
  const double ms = value * ms_per_unit;
  if (!(ms > 0) || ms > 24 * 3'600'000.0) return refuse();
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(ms + 0.5)));
}

std::string DescribeBytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string DescribeDuration(std::chrono::milliseconds duration) {
  const int64_t ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), ms % 1000 == 0 ? "%.0f s" : "%.3g s", static_cast<double>(ms) / 1000);
  return buffer;
}

}  // namespace kiln
