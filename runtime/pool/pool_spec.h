// The `--pool` specification: which simulated chips a DevicePool holds.
//
//   "v5e:8"        eight v5e chips
//   "v5e:4,v6e:2"  four v5e and two v6e chips
//   "v5e:2x2"      a 2x2 slice of four v5e chips (for multi-chip programs;
//                  each chip also serves single-chip jobs)
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/chip/chip_spec.h"

namespace kiln::runtime::pool {

inline constexpr int kMaxPoolChips = 1024;

struct PoolGroup {
  const ChipSpec* chip = nullptr;
  int count = 0;
  std::vector<int> topology;  // slice shape ("2x2" -> {2, 2}); empty for loose chips
  std::string Label() const;  // "v5e:4", "v5e:2x2"
};

struct PoolSpec {
  std::vector<PoolGroup> groups;
  int chip_count() const;
  std::string ToString() const;  // canonical "v5e:4,v6e:2"
};

// Errors quote the spec and say what is wrong: "bad pool spec 'v9:2':
// unknown chip 'v9' (known: v4, v5e, v5p, v6e, tpu7x)".
Result<PoolSpec> ParsePoolSpec(std::string_view text);

}  // namespace kiln::runtime::pool
