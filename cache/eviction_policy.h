// Which entries to evict to bring the store within its byte budget.
//
// Not plain LRU: an entry's retention score is the compile time it saves
// per stored byte, weighted by how often it was used and decayed by how long
// ago it was last used:
//
//   score = compile_seconds * (1 + hit_count) / stored_bytes
//           * 0.5 ^ (idle_seconds / half_life_seconds)
//
// so a small executable that took minutes to compile outlives a large one
// that compiled in a second, and an entry unused for many half-lives goes
// first whatever it cost. Lowest score is evicted first; pinned entries are
// never chosen. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::cache {

struct EvictionPolicy {
  double half_life_seconds = 24 * 3600.0;
  // Evict down to this fraction of the budget, so a store at its budget
  // does not evict on every put.
  double low_water_fraction = 0.9;
};

struct EvictionCandidate {
  int64_t row_id = 0;  // opaque to the policy
  uint64_t stored_bytes = 0;
  double compile_seconds = 0;
  int64_t hit_count = 0;
  int64_t last_used_ms = 0;
  bool pinned = false;
};

double RetentionScore(const EvictionCandidate& candidate, int64_t now_ms, const EvictionPolicy& policy);

// The row ids to evict, lowest score first, so that the remaining stored
// bytes are at most `low_water_fraction * budget_bytes`, or every unpinned
// candidate when that cannot be reached. Empty when `total_bytes` is within
// `budget_bytes`.
std::vector<int64_t> ChooseVictims(std::vector<EvictionCandidate> candidates, uint64_t total_bytes,
                                   uint64_t budget_bytes, int64_t now_ms, const EvictionPolicy& policy);

}  // namespace kiln::cache
