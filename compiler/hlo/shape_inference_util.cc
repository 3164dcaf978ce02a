#include "compiler/hlo/shape_inference_util.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::hlo::shape_inference_internal {
namespace {

bool AllUnique(Dims v) {
  std::vector<int64_t> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

}  // namespace

std::string Str(const Shape& s) { return s.ToString(); }

std::string Join(Dims v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "}";
}

std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

Status ExpectArray(const Shape& s, std::string_view what) {
  if (!s.IsArray()) return InvalidArgumentError(std::string(what) + " must be an array, got " + Str(s));
  return Ok();
}

bool InRange(int64_t v, int64_t n) { return v >= 0 && v < n; }
bool Contains(Dims v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Status CheckDimList(Dims dims, int64_t rank, std::string_view what, bool sorted) {
  for (int64_t d : dims) {
    if (!InRange(d, rank)) {
      return InvalidArgumentError(std::string(what) + " " + Join(dims) + " has dimension " + std::to_string(d) +
                                  " out of range for rank " + std::to_string(rank));
    }
  }
  if (!AllUnique(dims)) return InvalidArgumentError(std::string(what) + " " + Join(dims) + " repeats a dimension");
  if (sorted && !std::is_sorted(dims.begin(), dims.end())) {
    return InvalidArgumentError(std::string(what) + " " + Join(dims) + " must be sorted");
  }
  return Ok();
}

bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloatingPoint(a) && IsFloatingPoint(b));
}

PrimitiveType HigherPrecision(PrimitiveType a, PrimitiveType b) {
  if (IsFloatingPoint(a) && IsFloatingPoint(b) && BitWidth(b) > BitWidth(a)) return b;
  return a;
}

Dim DimOf(const Shape& s, int64_t i) { return {s.dimensions(i), IsDynamicDimension(s, i)}; }

Result<Shape> MakeArray(PrimitiveType type, const std::vector<Dim>& dims) {
  if (static_cast<int64_t>(dims.size()) > kMaxRank) {
    return InvalidArgumentError("result rank " + std::to_string(dims.size()) + " exceeds " + std::to_string(kMaxRank));
  }
  std::vector<int64_t> sizes;
  for (const Dim& d : dims) sizes.push_back(d.dynamic && d.size < 0 ? kUnboundedDim : d.size);
  Shape s(type, std::move(sizes));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].dynamic) s.set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  return s;
}

std::vector<Dim> DimsOf(const Shape& s) {
  std::vector<Dim> out;
  for (int64_t i = 0; i < s.rank(); ++i) out.push_back(DimOf(s, i));
  return out;
}

bool SizesMatch(const Shape& a, int64_t i, const Shape& b, int64_t j) {
  return IsDynamicDimension(a, i) || IsDynamicDimension(b, j) || a.dimensions(i) == b.dimensions(j);
}

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

}  // namespace kiln::hlo::shape_inference_internal
