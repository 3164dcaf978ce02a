// Typed access to the elements of array literals, for kernels that compute
// in a wider "compute type" than the stored one.
//
// Compute types are float, double, std::complex<float>, std::complex<double>,
// int64_t and uint64_t (GetElementAs and SetElementFrom also take bool). Reading widens the stored element (f16/bf16/f8 are
// decoded, signed integers sign-extended, pred is 0/1, complex to real keeps
// the real part). Writing narrows with XLA's conversion rules: narrow floats
// round to nearest even, integers wrap to their width, floats written to an
// integer type saturate (NaN becomes 0), anything written to pred is
// `value != 0`.
//
// Byte-level helpers copy elements without conversion (gather, scatter, sort).
// Pure functions over caller-owned literals; thread-compatible.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/primitive_type.h"

namespace kiln::runtime {

// Element i of `lit` converted to T (one of the compute types).
template <typename T>
T GetElementAs(const hlo::Literal& lit, int64_t i);

// Stores `value` converted to `lit`'s element type at element i.
template <typename T>
void SetElementFrom(hlo::Literal& lit, int64_t i, T value);

// Every element of `lit` converted to T, in row-major order.
template <typename T>
std::vector<T> ElementsAs(const hlo::Literal& lit);

// Writes values[i] into element i of `lit` (values.size() must equal its
// element count), converting to its element type.
template <typename T>
void StoreElements(std::span<const T> values, hlo::Literal& lit);

// The elements of `lit` read (or written) in place as T: non-null only when
// they are stored as T itself (f32 as float, s64 as int64_t, c64 as
// std::complex<float>, ...), so that a kernel can skip ElementsAs' copy.
// Valid while `lit` lives and keeps its storage.
template <typename T>
const T* ElementsInPlace(const hlo::Literal& lit);
template <typename T>
T* MutableElementsInPlace(hlo::Literal& lit);

// The compute type XLA-style kernels use for results of element type t:
// f16/bf16/f8/f32 -> float, f64 -> double, c64/c128 -> complex, signed
// integers -> int64_t, unsigned integers and pred -> uint64_t.
enum class ComputeType : uint8_t { kF32, kF64, kC64, kC128, kS64, kU64 };
ComputeType ComputeTypeFor(hlo::PrimitiveType t);

// Calls f(T{}) with T the C++ type of ComputeTypeFor(t).
template <typename F>
decltype(auto) VisitComputeType(hlo::PrimitiveType t, F&& f) {
  switch (ComputeTypeFor(t)) {
    case ComputeType::kF32: return f(float{});
    case ComputeType::kF64: return f(double{});
    case ComputeType::kC64: return f(std::complex<float>{});
    case ComputeType::kC128: return f(std::complex<double>{});
    case ComputeType::kS64: return f(int64_t{});
    case ComputeType::kU64: break;
  }
  return f(uint64_t{});
}

// ---- Byte-level helpers ---------------------------------------------------

inline int64_t ElementBytes(const hlo::Literal& lit) {
  return hlo::HostByteWidth(lit.shape().element_type());
}

// dst[di] = src[si]; both literals must have the same element type.
inline void CopyElement(const hlo::Literal& src, int64_t si, hlo::Literal& dst, int64_t di) {
  const int64_t width = ElementBytes(src);
  std::memcpy(dst.mutable_data().data() + di * width, src.data().data() + si * width, width);
}

// A zero scalar literal of element type t.
inline hlo::Literal ScalarLiteral(hlo::PrimitiveType t) { return hlo::Literal(hlo::Shape(t, {})); }

}  // namespace kiln::runtime
