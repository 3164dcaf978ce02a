#include "compiler/fusion/sharding.h"

#include <algorithm>
#include <string>

namespace kiln::fusion {
namespace {

// Devices of one sharding text: the product of the numbers in the first
// "devices=[...]"; 1 when absent or malformed.
int64_t DevicesOf(std::string_view text) {
  size_t at = text.find("devices=[");
  if (at == std::string_view::npos) return 1;
  at += 9;
  int64_t product = 1;
  int64_t value = 0;
  bool digits = false;
  for (; at < text.size(); ++at) {
    char c = text[at];
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      digits = true;
      if (value > (int64_t{1} << 20)) return 1;
    } else if (c == ',' || c == ']') {
      if (!digits) return 1;
      product *= value;
      if (product > (int64_t{1} << 20)) return 1;
      value = 0;
      digits = false;
      if (c == ']') return product;
    } else {
      return 1;
    }
  }
  return 1;
}

}  // namespace

int64_t ShardedDeviceCount(const hlo::Computation& computation) {
  int64_t devices = 1;
  for (const auto& instr : computation.instructions()) {
    const std::pmr::string* sharding = instr->AttributeText("sharding");
    if (sharding != nullptr) devices = std::max(devices, DevicesOf(*sharding));
  }
  return devices;
}

}  // namespace kiln::fusion
