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
#include <string>

#include "base/status.h"
#include "compiler/hlo/module.h"

namespace kiln::runtime::io {

// Default budget of `kiln run`: 16 GiB.
inline constexpr int64_t kDefaultEvalMemoryBudget = int64_t{16} << 30;

// Bytes of a value of `shape` on the host (tuples: the sum of their
// elements); INT64_MAX when it overflows or a dimension is unbounded.
int64_t HostBytes(const hlo::Shape& shape);

// The same in floating point, for messages: never saturates (a 10^21-byte
// shape says so); infinity when a dimension is unbounded.
double HostBytesReal(const hlo::Shape& shape);

// The lower bound described above; INT64_MAX on overflow.
int64_t EstimateEvalBytes(const hlo::Module& module);

// Ok when EstimateEvalBytes(module) <= budget_bytes; otherwise an error
// starting with "too large to evaluate" that gives both figures, true sizes
// even beyond 2^63 bytes.
Status CheckEvalMemory(const hlo::Module& module, int64_t budget_bytes);

// Multiply-adds of the module's dots and convolutions, each instruction once
// (loops not unrolled): a result element of a dot costs the product of the
// contracting sizes, one of a convolution the kernel's elements per output
// feature. A time estimate for harnesses that bound how long evaluating may
// take; INT64_MAX on overflow.
int64_t EstimateMultiplyAdds(const hlo::Module& module);

// The largest value any instruction of `module` makes, leaving out the
// entry's parameters and root (a compiled program's kernel: those are its
// buffers); INT64_MAX on overflow.
int64_t LargestInternalValueBytes(const hlo::Module& module);

// "4074 bytes (3.98 KiB)", "512 bytes", "4.00 EiB (4.61e+18 bytes)",
// "3.47 ZiB (4e+21 bytes)", "unbounded". Exact below 2^53 bytes.
std::string DescribeBytes(double bytes);

}  // namespace kiln::runtime::io
