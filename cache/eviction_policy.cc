#include "cache/eviction_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace kiln::cache {

double RetentionScore(const EvictionCandidate& candidate, int64_t now_ms, const EvictionPolicy& policy) {
  // A floor on both terms: a zero-second compile still has some value, and
  // a zero-byte entry must not divide by zero.
  const double seconds = std::max(candidate.compile_seconds, 1e-3);
  const double bytes = static_cast<double>(std::max<uint64_t>(candidate.stored_bytes, 1));
  const double uses = 1.0 + static_cast<double>(std::max<int64_t>(candidate.hit_count, 0));
  const double idle_seconds = std::max<int64_t>(now_ms - candidate.last_used_ms, 0) / 1000.0;
  const double decay = std::exp2(-idle_seconds / std::max(policy.half_life_seconds, 1.0));
  return seconds * uses / bytes * decay;
}

std::vector<int64_t> ChooseVictims(std::vector<EvictionCandidate> candidates, uint64_t total_bytes,
                                   uint64_t budget_bytes, int64_t now_ms, const EvictionPolicy& policy) {
  std::vector<int64_t> victims;
  if (total_bytes <= budget_bytes) return victims;
  const auto target = static_cast<uint64_t>(static_cast<double>(budget_bytes) * policy.low_water_fraction);
  std::vector<std::pair<double, const EvictionCandidate*>> ranked;
  ranked.reserve(candidates.size());
  for (const EvictionCandidate& candidate : candidates) {
    if (!candidate.pinned) ranked.emplace_back(RetentionScore(candidate, now_ms, policy), &candidate);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second->row_id < b.second->row_id;  // deterministic order
  });
  for (const auto& [score, candidate] : ranked) {
    if (total_bytes <= target) break;
    victims.push_back(candidate->row_id);
    total_bytes -= std::min(total_bytes, candidate->stored_bytes);
  }
  return victims;
}

}  // namespace kiln::cache
