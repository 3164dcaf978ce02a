// For kernel tests: n seeded random values of a compute type, integers in
// [-100, 100], floats in [-1, 1), complex parts each in [-1, 1).
#pragma once

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace kiln::runtime::testing {

template <typename T>
std::vector<T> RandomTestValues(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) {
    if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(std::uniform_int_distribution<int64_t>(-100, 100)(rng));
    } else if constexpr (std::is_floating_point_v<T>) {
      x = std::uniform_real_distribution<T>(-1, 1)(rng);
    } else {
      std::uniform_real_distribution<typename T::value_type> d(-1, 1);
      x = T(d(rng), d(rng));
    }
  }
  return v;
}

}  // namespace kiln::runtime::testing
