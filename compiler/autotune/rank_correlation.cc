#include "compiler/autotune/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace kiln::autotune {
namespace {

std::vector<double> Ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

std::optional<double> SpearmanCorrelation(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 3) return std::nullopt;
  std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

}  // namespace kiln::autotune
