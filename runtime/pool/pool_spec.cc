#include "runtime/pool/pool_spec.h"

#include <charconv>

namespace kiln::runtime::pool {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A positive integer, or 0 when `text` is not one.
int ParseCount(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0) return 0;
  return value;
}

std::string KnownChips() {
  std::string out;
  for (const ChipSpec& chip : AllChips()) {
    if (!out.empty()) out += ", ";
    out += chip.name;
  }
  return out;
}

}  // namespace

std::string PoolGroup::Label() const {
  std::string out = std::string(chip != nullptr ? chip->name : "?") + ":";
  if (topology.empty()) return out + std::to_string(count);
  for (size_t i = 0; i < topology.size(); ++i) {
    if (i > 0) out += 'x';
    out += std::to_string(topology[i]);
  }
  return out;
}

int PoolSpec::chip_count() const {
  int total = 0;
  for (const PoolGroup& g : groups) total += g.count;
  return total;
}

std::string PoolSpec::ToString() const {
  std::string out;
  for (const PoolGroup& g : groups) {
    if (!out.empty()) out += ',';
    out += g.Label();
  }
  return out;
}

Result<PoolSpec> ParsePoolSpec(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("bad pool spec '" + std::string(text) + "': " + why +
                                " (expected e.g. v5e:8, v5e:4,v6e:2 or v5e:2x2)");
  };
  PoolSpec spec;
  std::string_view rest = text;
  int64_t total = 0;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    size_t colon = item.find(':');
    if (item.empty()) return bad("empty entry");
    if (colon == std::string_view::npos) return bad("'" + std::string(item) + "' has no ':COUNT'");
    std::string_view name = item.substr(0, colon);
    std::string_view count = item.substr(colon + 1);
    PoolGroup group;
    group.chip = FindChip(name);
    if (group.chip == nullptr) {
      return bad("unknown chip '" + std::string(name) + "' (known: " + KnownChips() + ")");
    }
    if (count.find('x') != std::string_view::npos) {
      group.count = 1;
      std::string_view dims = count;
      while (true) {
        size_t x = dims.find('x');
        int d = ParseCount(dims.substr(0, x));
        if (d == 0) return bad("topology '" + std::string(count) + "' needs positive sizes like 2x2");
        group.topology.push_back(d);
        group.count = static_cast<int>(std::min<int64_t>(int64_t{group.count} * d, kMaxPoolChips + 1));
        if (x == std::string_view::npos) break;
        dims.remove_prefix(x + 1);
      }
    } else {
      group.count = ParseCount(count);
      if (group.count == 0) return bad("chip count '" + std::string(count) + "' is not a positive integer");
    }
    total += group.count;
    if (total > kMaxPoolChips) return bad("more than " + std::to_string(kMaxPoolChips) + " chips");
    spec.groups.push_back(std::move(group));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return spec;
}

}  // namespace kiln::runtime::pool
