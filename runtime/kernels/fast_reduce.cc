#include "runtime/kernels/fast_reduce.h"

#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/host_cores.h"

namespace kiln::runtime {
namespace {

// Hot loops compiled for AVX-512, AVX2 and the baseline ISA; the loader
// picks one per machine (GCC function multiversioning, as the elementwise
// loops do). Clang (the fuzz build) compiles them once.
#if defined(__clang__)
#define KILN_REDUCE_LOOP
#else
#define KILN_REDUCE_LOOP [[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]]
#endif

constexpr int kLanes = 32;
// Elements of a row folded into one set of lanes; a longer row is several
// such blocks (which may run on different cores).
constexpr int64_t kBlockElements = int64_t{1} << 20;
// Inputs smaller than this run as one part.
constexpr int64_t kPartElements = int64_t{1} << 20;

template <typename T>
inline constexpr bool kIsComplex = !std::is_arithmetic_v<T>;

template <ReducerKind K, typename T>
inline T Fold(T a, T b) {
  return ApplyReducer<T>(K, a, b);
}

// The value v with Fold<K>(v, x) == x for every x (-0.0 for a float sum,
// so that a sum of negative zeros stays -0.0).
template <ReducerKind K, typename T>
T Identity() {
  if constexpr (K == ReducerKind::kAdd) {
    if constexpr (std::is_floating_point_v<T>) return T(-0.0);
    if constexpr (kIsComplex<T>) return T(-0.0, -0.0);
    return T(0);
  } else if constexpr (K == ReducerKind::kMultiply) {
    return T(1);
  } else if constexpr (kIsComplex<T>) {
    return T();  // no other reducer is defined on complex values
  } else if constexpr (K == ReducerKind::kMaximum) {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  } else if constexpr (K == ReducerKind::kMinimum) {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  } else if constexpr (K == ReducerKind::kAnd) {
    return static_cast<T>(~uint64_t{0});
  } else {
    return T(0);  // kOr
  }
}

// out[i] = out[i] (op) in[r * stride + i] for r in [0, rows), i in [0, width).
template <ReducerKind K, typename T>
KILN_REDUCE_LOOP void FoldRows(const T* in, int64_t rows, int64_t stride, int64_t width, T* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * stride;
    for (int64_t i = 0; i < width; ++i) out[i] = Fold<K>(out[i], row[i]);
  }
}

// lanes[j] folds in[j], in[j + kLanes], ... for j in [0, kLanes).
template <ReducerKind K, typename T>
KILN_REDUCE_LOOP void FoldLanes(const T* in, int64_t n, T* lanes) {
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = Fold<K>(lanes[j], in[k + j]);
  }
  for (int j = 0; k + j < n; ++j) lanes[j] = Fold<K>(lanes[j], in[k + j]);
}

// The lanes of block `b` of a row of n elements, from the identity.
template <ReducerKind K, typename T>
void BlockLanes(const T* row, int64_t n, int64_t b, T* lanes) {
  std::fill(lanes, lanes + kLanes, Identity<K, T>());
  const int64_t start = b * kBlockElements;
  FoldLanes<K>(row + start, std::min(kBlockElements, n - start), lanes);
}

// init (op) the row, in the order the header describes.
template <ReducerKind K, typename T>
T FoldRow(const T* row, int64_t n, T init) {
  T acc = init;
  if (n < 2 * kLanes) {
    for (int64_t k = 0; k < n; ++k) acc = Fold<K>(acc, row[k]);
    return acc;
  }
  T lanes[kLanes];
  for (int64_t b = 0; b * kBlockElements < n; ++b) {
    BlockLanes<K>(row, n, b, lanes);
    for (T lane : lanes) acc = Fold<K>(acc, lane);
  }
  return acc;
}

int64_t CeilDivide(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Runs part(0..parts-1) on the calling thread and idle cores, or inline when
// there is one part.
template <typename F>
void RunParts(int64_t parts, F&& part) {
  if (parts == 1) {
    part(0);
  } else {
    HostCores::Get().ParallelFor(parts, part);
  }
}

// Inner dimensions: every output folds its column of g.reduced values.
template <ReducerKind K, typename T>
void ReduceColumns(const ReduceGeometry& g, const T* in, T init, T* out) {
  const int64_t slice = g.reduced * g.inner;
  const int64_t block_rows = std::max<int64_t>(1, CeilDivide(kBlockElements, g.inner));
  const int64_t blocks = CeilDivide(g.reduced, block_rows);
  std::fill(out, out + g.outer * g.inner, init);
  if (blocks > 1) {
    // Long columns: blocks of rows from the identity (in parts), then init
    // and the blocks in order.
    std::vector<T> partial(blocks * g.inner);
    for (int64_t o = 0; o < g.outer; ++o) {
      RunParts(blocks, [&](int64_t b) {
        T* block_out = partial.data() + b * g.inner;
        std::fill(block_out, block_out + g.inner, Identity<K, T>());
        const int64_t r0 = b * block_rows;
        FoldRows<K>(in + o * slice + r0 * g.inner, std::min(block_rows, g.reduced - r0), g.inner, g.inner,
                    block_out);
      });
      FoldRows<K>(partial.data(), blocks, g.inner, g.inner, out + o * g.inner);
    }
    return;
  }
  // Short columns (each slice is at most about 2^20 elements): whole outer
  // slices per part.
  const int64_t per_part = std::max<int64_t>(1, kPartElements / std::max<int64_t>(1, slice));
  RunParts(CeilDivide(g.outer, per_part), [&](int64_t p) {
    for (int64_t o = p * per_part; o < std::min(g.outer, (p + 1) * per_part); ++o) {
      FoldRows<K>(in + o * slice, g.reduced, g.inner, g.inner, out + o * g.inner);
    }
  });
}

// No inner dimensions: every output folds a contiguous row.
template <ReducerKind K, typename T>
void ReduceRows(const ReduceGeometry& g, const T* in, T init, T* out) {
  if (g.outer > 1 || g.reduced <= kBlockElements) {
    const int64_t per_part = std::max<int64_t>(1, kPartElements / std::max<int64_t>(1, g.reduced));
    RunParts(CeilDivide(g.outer, per_part), [&](int64_t p) {
      for (int64_t o = p * per_part; o < std::min(g.outer, (p + 1) * per_part); ++o) {
        out[o] = FoldRow<K>(in + o * g.reduced, g.reduced, init);
      }
    });
    return;
  }
  // One long row: its blocks' lanes in parts, then folded in order.
  const int64_t blocks = CeilDivide(g.reduced, kBlockElements);
  std::vector<T> lanes(blocks * kLanes);
  RunParts(blocks, [&](int64_t b) { BlockLanes<K>(in, g.reduced, b, lanes.data() + b * kLanes); });
  T acc = init;
  for (T lane : lanes) acc = Fold<K>(acc, lane);
  out[0] = acc;
}

template <ReducerKind K, typename T>
void Reduce(const ReduceGeometry& g, const T* in, T init, T* out) {
  if (g.inner > 1) {
    ReduceColumns<K>(g, in, init, out);
  } else {
    ReduceRows<K>(g, in, init, out);
  }
}

}  // namespace

bool ContiguousReduceGeometry(std::span<const int64_t> dims, std::span<const int64_t> reduced,
                              ReduceGeometry& geometry) {
  geometry = ReduceGeometry{};
  const int64_t rank = static_cast<int64_t>(dims.size());
  // The first and last reduced dimension of size > 1.
  int64_t first = rank, last = -1;
  for (int64_t d : reduced) {
    if (d < 0 || d >= rank) return false;
    if (dims[d] == 1) continue;
    first = std::min(first, d);
    last = std::max(last, d);
  }
  for (int64_t d = 0; d < rank; ++d) {
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (last < 0) {
      geometry.outer *= dims[d];  // nothing of size > 1 is reduced
    } else if (d < first) {
      geometry.outer *= dims[d];
    } else if (d > last) {
      geometry.inner *= dims[d];
    } else {
      if (!is_reduced && dims[d] != 1) return false;  // a kept dimension inside the run
      geometry.reduced *= dims[d];
    }
  }
  return true;
}

template <typename T>
bool ReduceContiguous(ReducerKind kind, const ReduceGeometry& g, const T* in, T init, T* out) {
  auto run = [&]<ReducerKind K>() {
    if constexpr (kIsComplex<T> && K != ReducerKind::kAdd && K != ReducerKind::kMultiply) {
      return false;
    } else if constexpr (std::is_floating_point_v<T> && (K == ReducerKind::kAnd || K == ReducerKind::kOr)) {
      return false;
    } else {
      Reduce<K>(g, in, init, out);
      return true;
    }
  };
  switch (kind) {
    case ReducerKind::kAdd: return run.template operator()<ReducerKind::kAdd>();
    case ReducerKind::kMultiply: return run.template operator()<ReducerKind::kMultiply>();
    case ReducerKind::kMaximum: return run.template operator()<ReducerKind::kMaximum>();
    case ReducerKind::kMinimum: return run.template operator()<ReducerKind::kMinimum>();
    case ReducerKind::kAnd: return run.template operator()<ReducerKind::kAnd>();
    case ReducerKind::kOr: return run.template operator()<ReducerKind::kOr>();
    default: return false;
  }
}

template bool ReduceContiguous<float>(ReducerKind, const ReduceGeometry&, const float*, float, float*);
template bool ReduceContiguous<double>(ReducerKind, const ReduceGeometry&, const double*, double, double*);
template bool ReduceContiguous<std::complex<float>>(ReducerKind, const ReduceGeometry&,
                                                    const std::complex<float>*, std::complex<float>,
                                                    std::complex<float>*);
template bool ReduceContiguous<std::complex<double>>(ReducerKind, const ReduceGeometry&,
                                                     const std::complex<double>*, std::complex<double>,
                                                     std::complex<double>*);
template bool ReduceContiguous<int64_t>(ReducerKind, const ReduceGeometry&, const int64_t*, int64_t, int64_t*);
template bool ReduceContiguous<uint64_t>(ReducerKind, const ReduceGeometry&, const uint64_t*, uint64_t,
                                         uint64_t*);

}  // namespace kiln::runtime
