// HLO text of an integer list, for attributes that passes and the spmd
// library write:
// IntListText({1,0}) is "{1,0}", IntListText(dims, '[', ']') is "[2,4]".
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::hlo {

inline std::string IntListText(const std::vector<int64_t>& values, char open = '{', char close = '}') {
  std::string out(1, open);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += close;
  return out;
}

}  // namespace kiln::hlo
