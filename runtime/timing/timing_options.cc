#include "runtime/timing/timing_options.h"

#include <charconv>
#include <string>
#include <vector>

namespace kiln::runtime::timing {

Result<DotTiles> ParseDotTiles(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("bad --dot-tiles '" + std::string(text) + "': " + std::string(why) +
                                " (expected BM,BN,BK, e.g. 512,1024,1024)");
  };
  std::vector<int64_t> values;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view field = rest.substr(0, comma);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
      return bad("'" + std::string(field) + "' is not an integer");
    }
    if (value <= 0 || value > (int64_t{1} << 20)) return bad("block sizes must be in [1, 1048576]");
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (values.size() != 3) return bad("need exactly three sizes");
  return DotTiles{values[0], values[1], values[2]};
}

}  // namespace kiln::runtime::timing
