#include "runtime/io/literal_compare.h"

#include <cmath>
#include <cstring>

#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

// "[1,0,2]" for element `linear` of row-major `dims`.
std::string MultiIndex(const std::vector<int64_t>& dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 0) break;
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) {
    if (d > 0) out += ',';
    out += std::to_string(index[d]);
  }
  return out + "]";
}

// Empty when `actual` matches `expected`; otherwise why not.
std::string CompareScalar(double expected, double actual, CompareMode mode,
                          const Tolerance& tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) {
    return std::isnan(expected) && std::isnan(actual) ? "" : "NaN mismatch";
  }
  if (expected == actual) return "";
  if (mode == CompareMode::kEqual || std::isinf(expected) || std::isinf(actual)) return "not equal";
  double abs_error = std::fabs(actual - expected);
  double rel_error = expected == 0 ? INFINITY : abs_error / std::fabs(expected);
  if (abs_error <= tolerance.abs || rel_error <= tolerance.rel) return "";
  return StrCat("abs error ", SignificantDigits(abs_error), " > ", SignificantDigits(tolerance.abs), ", rel error ",
                SignificantDigits(rel_error), " > ", SignificantDigits(tolerance.rel));
}

// Real and imaginary part of element i of a floating-point or complex array.
std::pair<double, double> ComplexParts(const Literal& lit, int64_t i) {
  PrimitiveType type = lit.shape().element_type();
  if (type == PrimitiveType::kC64) return {lit.Get<float>(2 * i), lit.Get<float>(2 * i + 1)};
  if (type == PrimitiveType::kC128) return {lit.Get<double>(2 * i), lit.Get<double>(2 * i + 1)};
  return {lit.GetAsDouble(i), 0.0};
}

std::string ElementText(const Literal& lit, int64_t i) {
  std::string out;
  hlo::AppendLiteralElement(lit, i, out);
  return out;
}

Status CompareArrays(const Literal& expected, const Literal& actual, const CompareOptions& options,
                     const std::string& where) {
  PrimitiveType type = expected.shape().element_type();
  bool numeric = hlo::IsFloatingPoint(type) || hlo::IsComplex(type);
  Tolerance tolerance = options.tolerance.value_or(DefaultTolerance(type));
  int width = hlo::HostByteWidth(type);
  int64_t count = expected.element_count();
  int64_t mismatches = 0;
  int64_t first = -1;
  std::string first_reason;
  for (int64_t i = 0; i < count; ++i) {
    std::string reason;
    if (numeric) {
      auto [er, ei] = ComplexParts(expected, i);
      auto [ar, ai] = ComplexParts(actual, i);
      reason = CompareScalar(er, ar, options.mode, tolerance);
      if (reason.empty()) reason = CompareScalar(ei, ai, options.mode, tolerance);
    } else if (std::memcmp(expected.data().data() + i * width, actual.data().data() + i * width,
                           width) != 0) {
      reason = "not equal";
    }
    if (reason.empty()) continue;
    if (mismatches++ == 0) {
      first = i;
      first_reason = std::move(reason);
    }
  }
  if (mismatches == 0) return Ok();
  return InvalidArgumentError(StrCat(where, "index ", MultiIndex(expected.shape().dimensions(), first), ": expected ",
                                     ElementText(expected, first), ", got ", ElementText(actual, first), " (",
                                     first_reason, "); ", mismatches, " of ", count, " elements differ"));
}

Status CompareAt(const Literal& expected, const Literal& actual, const CompareOptions& options,
                 const std::string& tuple_index) {
  std::string where = tuple_index.empty() ? "" : "at {" + tuple_index + "} ";
  const hlo::Shape& es = expected.shape();
  const hlo::Shape& as = actual.shape();
  if (es.IsTuple() != as.IsTuple() || (!es.IsTuple() && (es.element_type() != as.element_type() ||
                                                         es.dimensions() != as.dimensions()))) {
    return InvalidArgumentError(StrCat(where, "shape mismatch: expected ", es.ToString(), ", got ", as.ToString()));
  }
  if (expected.elided() || actual.elided()) {
    return InvalidArgumentError(where + "cannot compare a literal without data ({...})");
  }
  if (!es.IsTuple()) return CompareArrays(expected, actual, options, where);
  const auto& expected_elements = expected.tuple_elements();
  const auto& actual_elements = actual.tuple_elements();
  if (expected_elements.size() != actual_elements.size()) {
    return InvalidArgumentError(
        StrCat(where, "expected a tuple of ", expected_elements.size(), " elements, got ", actual_elements.size()));
  }
  for (size_t i = 0; i < expected_elements.size(); ++i) {
    std::string index =
        tuple_index.empty() ? std::to_string(i) : tuple_index + "," + std::to_string(i);
    KILN_RETURN_IF_ERROR(CompareAt(expected_elements[i], actual_elements[i], options, index));
  }
  return Ok();
}

}  // namespace

Tolerance DefaultTolerance(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      return {1e-12, 1e-10};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      return {1e-5, 1e-4};
    case PrimitiveType::kF16:
      return {1e-3, 1e-3};
    case PrimitiveType::kBF16:
      return {1e-2, 1e-2};
    default:
      // The f8 and f4 formats (3 or fewer mantissa bits); integers never use it.
      return {1e-1, 1.25e-1};
  }
}

Status CompareLiterals(const Literal& expected, const Literal& actual,
                       const CompareOptions& options) {
  return CompareAt(expected, actual, options, "");
}

}  // namespace kiln::runtime::io
