// How much host memory evaluating a module needs, at least, so that callers
// (kiln run, the corpus harness, the server) can refuse a module that cannot
// fit instead of starting to allocate. The Llama 405B train steps of the
// corpus take hundreds of GiB.
//
// The estimate is a lower bound: the bytes of the entry's parameters and
// result, plus the largest single value any instruction of any computation
// produces (that value must exist while its users run). Dynamic dimensions
// count at their bound. Pure; thread-safe.
#pragma once

#include <cstdint>

#include "compiler/hlo/module.h"
#include "compiler/hlo/status.h"

namespace kiln::runtime::io {

// Default budget of `kiln run`: 16 GiB.
inline constexpr int64_t kDefaultEvalMemoryBudget = int64_t{16} << 30;

// Bytes of a value of `shape` on the host (tuples: the sum of their
// elements); INT64_MAX when it overflows or a dimension is unbounded.
int64_t HostBytes(const hlo::Shape& shape);

// The lower bound described above; INT64_MAX on overflow.
int64_t EstimateEvalBytes(const hlo::Module& module);

// Ok when EstimateEvalBytes(module) <= budget_bytes; otherwise an error
// starting with "too large to evaluate" that gives both figures.
Status CheckEvalMemory(const hlo::Module& module, int64_t budget_bytes);

// Multiply-adds of the module's dots and convolutions, each instruction once
// (loops not unrolled): a result element of a dot costs the product of the
// contracting sizes, one of a convolution the kernel's elements per output
// feature. A time estimate for harnesses that bound how long evaluating may
// take; INT64_MAX on overflow.
int64_t EstimateMultiplyAdds(const hlo::Module& module);

}  // namespace kiln::runtime::io
