// Spearman's rank correlation of two series (ties get their average rank),
// for how well the cost model ranks what was measured.
//
// Pure function; thread-safe.
#pragma once

#include <optional>
#include <span>

namespace kiln::autotune {

// nullopt when the series differ in length, have fewer than 3 points or
// one of them is constant.
std::optional<double> SpearmanCorrelation(std::span<const double> a, std::span<const double> b);

}  // namespace kiln::autotune
