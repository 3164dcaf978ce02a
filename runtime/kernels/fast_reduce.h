// Reductions by a recognised binary reducer (combiner.h: add, multiply,
// maximum, minimum, and, or) over one input whose reduced dimensions form
// one run: the input is then [outer, reduced, inner] and each output
// element folds a strided column of it.
//
// Vector loops, compiled for AVX-512, AVX2 and the baseline ISA and picked
// for the CPU at load (GCC target clones), and parts over the host cores no
// chip holds (base/host_cores.h). The order in which an output element's
// values are combined depends on the shape alone, never on the ISA or the
// number of threads:
//  - with inner dimensions, each output folds its column in order, init
//    first (as the element-by-element walk does);
//  - reducing minor dimensions, a row folds into 32 interleaved lanes
//    (lane j takes elements j, j + 32, ...), in blocks of 2^20 elements for
//    a long row, and init then folds the lanes and blocks in order.
//
// Pure functions over caller-owned buffers; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/kernels/combiner.h"

namespace kiln::runtime {

// [outer, reduced, inner] sizes of an input of `dims` reduced over
// `reduced` (any order), or false when the reduced dimensions (ignoring
// dimensions of size 1) are not one run.
struct ReduceGeometry {
  int64_t outer = 1, reduced = 1, inner = 1;
};
bool ContiguousReduceGeometry(std::span<const int64_t> dims, std::span<const int64_t> reduced,
                              ReduceGeometry& geometry);

// out[o * inner + i] = init (op) in[o, 0, i] (op) ... (op) in[o, reduced - 1, i]
// for every outer o and inner i, in the order above. `kind` is one of the
// six binary reducers defined on T (ApplyReducer); T is a compute type
// (element_access.h). Returns false, writing nothing, for kAssign and
// kGeneral.
template <typename T>
bool ReduceContiguous(ReducerKind kind, const ReduceGeometry& g, const T* in, T init, T* out);

}  // namespace kiln::runtime
