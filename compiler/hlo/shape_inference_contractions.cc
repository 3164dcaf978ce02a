// Shape inference for dot, convolution, sliding windows and fft
// (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Str;
using shape_inference_internal::TypeName;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::Contains;
using shape_inference_internal::CheckDimList;
using shape_inference_internal::HigherPrecision;
using shape_inference_internal::Dim;
using shape_inference_internal::DimOf;
using shape_inference_internal::MakeArray;
using shape_inference_internal::DimsOf;
using shape_inference_internal::SizesMatch;

namespace {

// XLA's DilatedBound and StridedBound over 128-bit intermediates.
Result<int64_t> WindowOutputSize(int64_t base, const WindowDimension& w) {
  __int128 dilated_base = base == 0 ? 0 : (__int128(base) - 1) * w.base_dilation + 1;
  __int128 padded = dilated_base + w.padding_low + w.padding_high;
  __int128 window = w.size == 0 ? 0 : (__int128(w.size) - 1) * w.window_dilation + 1;
  __int128 out = window > padded ? 0 : (padded - window) / w.stride + 1;
  if (out > INT64_MAX) return InvalidArgumentError("window output size overflows");
  return static_cast<int64_t>(out);
}

}  // namespace

Result<Shape> InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                            PrimitiveType result_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "dot lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "dot rhs"));
  KILN_RETURN_IF_ERROR(CheckDimList(d.lhs_batch_dimensions, lhs.rank(), "lhs_batch_dims"));
  KILN_RETURN_IF_ERROR(CheckDimList(d.rhs_batch_dimensions, rhs.rank(), "rhs_batch_dims"));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.lhs_contracting_dimensions, lhs.rank(), "lhs_contracting_dims"));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.rhs_contracting_dimensions, rhs.rank(), "rhs_contracting_dims"));
  for (int64_t b : d.lhs_batch_dimensions) {
    if (Contains(d.lhs_contracting_dimensions, b)) {
      return InvalidArgumentError("lhs dimension " + std::to_string(b) + " is both batch and contracting");
    }
  }
  for (int64_t b : d.rhs_batch_dimensions) {
    if (Contains(d.rhs_contracting_dimensions, b)) {
      return InvalidArgumentError("rhs dimension " + std::to_string(b) + " is both batch and contracting");
    }
  }
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return InvalidArgumentError("lhs has " + std::to_string(d.lhs_contracting_dimensions.size()) +
                                " contracting dimensions but rhs has " +
                                std::to_string(d.rhs_contracting_dimensions.size()));
  }
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return InvalidArgumentError("lhs has " + std::to_string(d.lhs_batch_dimensions.size()) +
                                " batch dimensions but rhs has " + std::to_string(d.rhs_batch_dimensions.size()));
  }
  auto mismatch = [&](const char* kind, int64_t l, int64_t r) {
    return InvalidArgumentError(std::string("lhs ") + kind + " dimension " + std::to_string(l) + " has size " +
                                std::to_string(lhs.dimensions(l)) + " but rhs " + kind + " dimension " +
                                std::to_string(r) + " has size " + std::to_string(rhs.dimensions(r)));
  };
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t l = d.lhs_contracting_dimensions[i], r = d.rhs_contracting_dimensions[i];
    if (!SizesMatch(lhs, l, rhs, r)) return mismatch("contracting", l, r);
  }
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t l = d.lhs_batch_dimensions[i], r = d.rhs_batch_dimensions[i];
    if (!SizesMatch(lhs, l, rhs, r)) return mismatch("batch", l, r);
  }
  std::vector<Dim> dims;
  for (int64_t b : d.lhs_batch_dimensions) dims.push_back(DimOf(lhs, b));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!Contains(d.lhs_batch_dimensions, i) && !Contains(d.lhs_contracting_dimensions, i)) {
      dims.push_back(DimOf(lhs, i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!Contains(d.rhs_batch_dimensions, i) && !Contains(d.rhs_contracting_dimensions, i)) {
      dims.push_back(DimOf(rhs, i));
    }
  }
  const PrimitiveType from = HigherPrecision(lhs.element_type(), rhs.element_type());
  if (!IsArrayType(result_type)) return InvalidArgumentError("dot result must be an array");
  if (result_type != from && !IsFloatingPoint(from) && BitWidth(result_type) < BitWidth(from)) {
    return InvalidArgumentError("dot result type " + TypeName(result_type) + " is narrower than the operand type " +
                                TypeName(from));
  }
  return MakeArray(result_type, dims);
}

Result<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                     PrimitiveType element_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(base, "windowed operand"));
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return InvalidArgumentError("window has " + std::to_string(window.dimensions.size()) +
                                " dimensions but the operand " + Str(base) + " has rank " +
                                std::to_string(base.rank()));
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    const std::string where = "window dimension " + std::to_string(i);
    if (w.size <= 0) return InvalidArgumentError(where + " has non-positive size " + std::to_string(w.size));
    if (w.stride <= 0) return InvalidArgumentError(where + " has non-positive stride " + std::to_string(w.stride));
    if (w.base_dilation < 1 || w.window_dilation < 1) {
      return InvalidArgumentError(where + " has a dilation factor below 1");
    }
    Dim d = DimOf(base, i);
    if (d.size >= 0) {
      KILN_ASSIGN_OR_RETURN(d.size, WindowOutputSize(d.size, w));
    }
    dims.push_back(d);
  }
  return MakeArray(element_type, dims);
}

Result<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                    const ConvolutionDimensionNumbers& d, const Window& window,
                                    int64_t feature_group_count, int64_t batch_group_count,
                                    PrimitiveType result_type) {
  KILN_RETURN_IF_ERROR(ExpectArray(lhs, "convolution lhs"));
  KILN_RETURN_IF_ERROR(ExpectArray(rhs, "convolution rhs"));
  if (feature_group_count <= 0 || batch_group_count <= 0) {
    return InvalidArgumentError("feature_group_count and batch_group_count must be positive");
  }
  if (feature_group_count > 1 && batch_group_count > 1) {
    return InvalidArgumentError("feature_group_count and batch_group_count cannot both exceed 1");
  }
  if (lhs.rank() != d.input_rank) {
    return InvalidArgumentError("lhs " + Str(lhs) + " does not have the rank " + std::to_string(d.input_rank) +
                                " of its dimension labels");
  }
  if (rhs.rank() != d.kernel_rank) {
    return InvalidArgumentError("rhs " + Str(rhs) + " does not have the rank " + std::to_string(d.kernel_rank) +
                                " of its dimension labels");
  }
  const size_t spatial = d.input_spatial_dimensions.size();
  if (window.dimensions.size() != spatial) {
    return InvalidArgumentError("window has " + std::to_string(window.dimensions.size()) +
                                " dimensions but the convolution has " + std::to_string(spatial) +
                                " spatial dimensions");
  }
  const int64_t in_f = d.input_feature_dimension, in_b = d.input_batch_dimension;
  const int64_t k_i = d.kernel_input_feature_dimension, k_o = d.kernel_output_feature_dimension;
  const bool dyn_in_f = IsDynamicDimension(lhs, in_f), dyn_k_i = IsDynamicDimension(rhs, k_i);
  const bool dyn_k_o = IsDynamicDimension(rhs, k_o), dyn_in_b = IsDynamicDimension(lhs, in_b);
  const int64_t input_features = lhs.dimensions(in_f), kernel_in = rhs.dimensions(k_i);
  const int64_t kernel_out = rhs.dimensions(k_o), input_batch = lhs.dimensions(in_b);
  if (!dyn_in_f && !dyn_k_i &&
      (input_features % feature_group_count != 0 ||
       input_features / feature_group_count != kernel_in)) {
    return InvalidArgumentError("lhs feature dimension has size " + std::to_string(input_features) +
                                ", which divided by feature_group_count " + std::to_string(feature_group_count) +
                                " must equal the rhs input feature size " + std::to_string(kernel_in));
  }
  if (!dyn_k_o && (kernel_out % feature_group_count != 0 || kernel_out % batch_group_count != 0)) {
    return InvalidArgumentError("rhs output feature size " + std::to_string(kernel_out) +
                                " must be divisible by feature_group_count " + std::to_string(feature_group_count) +
                                " and batch_group_count " + std::to_string(batch_group_count));
  }
  if (!dyn_in_b && input_batch % batch_group_count != 0) {
    return InvalidArgumentError("lhs batch size " + std::to_string(input_batch) +
                                " must be divisible by batch_group_count " + std::to_string(batch_group_count));
  }
  std::vector<Dim> base_dims;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kd = d.kernel_spatial_dimensions[i];
    if (!IsDynamicDimension(rhs, kd) && rhs.dimensions(kd) != window.dimensions[i].size) {
      return InvalidArgumentError("window size " + std::to_string(window.dimensions[i].size) +
                                  " of spatial dimension " + std::to_string(i) +
                                  " does not match the rhs dimension size " + std::to_string(rhs.dimensions(kd)));
    }
    base_dims.push_back(DimOf(lhs, d.input_spatial_dimensions[i]));
  }
  KILN_ASSIGN_OR_RETURN(Shape base, MakeArray(lhs.element_type(), base_dims));
  KILN_ASSIGN_OR_RETURN(Shape windowed, InferWindowOutputShape(base, window, lhs.element_type()));
  std::vector<Dim> dims(d.output_rank, Dim{kUnboundedDim, true});  // '?' positions stay unknown
  dims[d.output_batch_dimension] = {dyn_in_b ? input_batch : input_batch / batch_group_count,
                                    dyn_in_b};
  dims[d.output_feature_dimension] = {kernel_out, dyn_k_o};
  for (size_t i = 0; i < spatial; ++i) {
    Dim w = DimOf(windowed, static_cast<int64_t>(i));
    if (IsDynamicDimension(rhs, d.kernel_spatial_dimensions[i])) w.dynamic = true;
    dims[d.output_spatial_dimensions[i]] = w;
  }
  const PrimitiveType from = HigherPrecision(lhs.element_type(), rhs.element_type());
  if (!IsArrayType(result_type)) return InvalidArgumentError("convolution result must be an array");
  if (result_type != from && !IsFloatingPoint(from) && BitWidth(result_type) < BitWidth(from)) {
    return InvalidArgumentError("convolution result type " + TypeName(result_type) +
                                " is narrower than the operand type " + TypeName(from));
  }
  return MakeArray(result_type, dims);
}

Result<Shape> InferFftShape(const Shape& in, const FftConfig& fft) {
  KILN_RETURN_IF_ERROR(ExpectArray(in, "fft operand"));
  const int64_t n = static_cast<int64_t>(fft.length.size());
  if (n < 1 || n > 3) return InvalidArgumentError("fft_length must have 1 to 3 entries");
  if (in.rank() < n) return InvalidArgumentError("fft operand " + Str(in) + " has rank below fft rank");
  const PrimitiveType t = in.element_type();
  std::vector<Dim> dims = DimsOf(in);
  auto inner = [&](int64_t i) { return in.rank() - n + i; };
  switch (fft.type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) return InvalidArgumentError("FFT/IFFT need a complex operand, got " + Str(in));
      return in;
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return InvalidArgumentError("RFFT needs an f32 or f64 operand, got " + Str(in));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (!IsDynamicDimension(in, inner(i)) && in.dimensions(inner(i)) != fft.length[i]) {
          return InvalidArgumentError("RFFT operand dimension " + std::to_string(inner(i)) + " must equal fft_length " +
                                      std::to_string(fft.length[i]));
        }
      }
      if (fft.length[n - 1] != 0) dims.back().size = fft.length[n - 1] / 2 + 1;
      return MakeArray(t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128, dims);
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) return InvalidArgumentError("IRFFT needs a complex operand, got " + Str(in));
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (!IsDynamicDimension(in, inner(i)) && in.dimensions(inner(i)) != fft.length[i]) {
          return InvalidArgumentError("IRFFT operand dimension " + std::to_string(inner(i)) +
                                      " must equal fft_length " + std::to_string(fft.length[i]));
        }
      }
      const int64_t last = in.dimensions(in.rank() - 1);
      if (!IsDynamicDimension(in, in.rank() - 1) && (last != 0 || fft.length[n - 1] != 0) &&
          last != fft.length[n - 1] / 2 + 1) {
        return InvalidArgumentError("IRFFT innermost dimension must be fft_length/2+1");
      }
      dims.back().size = fft.length[n - 1];
      return MakeArray(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64, dims);
    }
  }
  return InvalidArgumentError("unknown fft type");
}

}  // namespace kiln::hlo
