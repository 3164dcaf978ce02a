// fft: FFT / IFFT / RFFT / IRFFT over the innermost fft_length dimensions,
// computed in complex<double> with Eigen's FFT (kissfft, any length).

#include <complex>

#include <unsupported/Eigen/FFT>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

using Complex = std::complex<double>;

// Transforms every line of `data` (row-major over `dims`) along `axis`.
void TransformAxis(std::vector<Complex>& data, std::span<const int64_t> dims, int64_t axis,
                   bool inverse, Eigen::FFT<double>& fft) {
  const int64_t length = dims[axis];
  // Length 1 is the identity (and kissfft cannot factor it).
  if (length <= 1 || data.empty()) return;
  const int64_t inner = Product(dims.subspan(axis + 1));
  const int64_t outer = Product(dims.first(axis));
  std::vector<Complex> line(length), out(length);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * length * inner + in;
      for (int64_t t = 0; t < length; ++t) line[t] = data[base + t * inner];
      if (inverse) {
        fft.inv(out, line);
      } else {
        fft.fwd(out, line);
      }
      for (int64_t t = 0; t < length; ++t) data[base + t * inner] = out[t];
    }
  }
}

// Copies the leading `to_dims[last]` entries of each innermost line of
// `from` (dims equal except the last), padding with zeros.
std::vector<Complex> ResizeLastDim(const std::vector<Complex>& from,
                                   std::span<const int64_t> from_dims,
                                   std::span<const int64_t> to_dims) {
  const int64_t from_len = from_dims.back(), to_len = to_dims.back();
  const int64_t lines = to_len == 0 ? 0 : Product(to_dims) / to_len;
  std::vector<Complex> to(Product(to_dims));
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t t = 0; t < std::min(from_len, to_len); ++t) {
      to[l * to_len + t] = from[l * from_len + t];
    }
  }
  return to;
}

}  // namespace

Result<hlo::Literal> EvalFft(const hlo::Instruction& instr, Operands operands, EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  KILN_ASSIGN_OR_RETURN(hlo::FftConfig config, hlo::GetFftConfig(instr));
  const hlo::Shape& in_shape = operands[0]->shape();
  const hlo::Shape& out_shape = instr.shape();
  const int64_t k = static_cast<int64_t>(config.length.size());
  const int64_t rank = in_shape.rank();
  if (k < 1 || k > 3 || k > rank || !out_shape.IsArray() || out_shape.rank() != rank) {
    return KernelError(instr, "fft_length " + DimsToString(config.length) +
                                  " does not fit operand " + in_shape.ToString() +
                                  " and result " + out_shape.ToString());
  }
  // A zero fft_length, or an empty operand, transforms nothing: XLA yields
  // zeros (no elements) of the result shape.
  if (Product(config.length) == 0 || in_shape.ElementCount() == 0) {
    return hlo::Literal(out_shape);
  }
  // The complex dims the transforms run over: the full spectrum.
  std::vector<int64_t> full_dims = in_shape.dimensions();
  for (int64_t i = 0; i < k; ++i) full_dims[rank - k + i] = config.length[i];
  std::vector<int64_t> expect_in = full_dims, expect_out = full_dims;
  const int64_t last = config.length.back();
  if (config.type == hlo::FftType::kRfft) expect_out.back() = last == 0 ? 0 : last / 2 + 1;
  if (config.type == hlo::FftType::kIrfft) expect_in.back() = last == 0 ? 0 : last / 2 + 1;
  const bool real_in = config.type == hlo::FftType::kRfft;
  const bool real_out = config.type == hlo::FftType::kIrfft;
  if (in_shape.dimensions() != expect_in || out_shape.dimensions() != expect_out ||
      hlo::IsComplex(in_shape.element_type()) == real_in ||
      hlo::IsComplex(out_shape.element_type()) == real_out) {
    return KernelError(instr, "operand " + in_shape.ToString() + " and result " +
                                  out_shape.ToString() + " do not match fft_length " +
                                  DimsToString(config.length) + " for this fft_type");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(Product(full_dims)));

  Eigen::FFT<double> fft;
  std::vector<Complex> data = ElementsAs<Complex>(*operands[0]);
  const bool inverse = config.type == hlo::FftType::kIfft || config.type == hlo::FftType::kIrfft;
  if (config.type == hlo::FftType::kIrfft) {
    // Inverse over the outer transformed dims on the half spectrum, then a
    // complex-to-real inverse of each Hermitian line of the last dim.
    for (int64_t axis = rank - k; axis < rank - 1; ++axis) {
      TransformAxis(data, expect_in, axis, true, fft);
    }
    const int64_t half = expect_in.back();
    std::vector<Complex> full = ResizeLastDim(data, expect_in, full_dims);
    const int64_t lines = last == 0 ? 0 : Product(full_dims) / last;
    for (int64_t l = 0; l < lines; ++l) {
      Complex* line = full.data() + l * last;
      for (int64_t t = half; t < last; ++t) line[t] = std::conj(line[last - t]);
    }
    TransformAxis(full, full_dims, rank - 1, true, fft);
    data = std::move(full);
  } else {
    for (int64_t axis = rank - k; axis < rank; ++axis) {
      TransformAxis(data, full_dims, axis, inverse, fft);
    }
    if (config.type == hlo::FftType::kRfft) data = ResizeLastDim(data, full_dims, expect_out);
  }
  hlo::Literal result(out_shape);
  StoreElements<Complex>(data, result);
  return result;
}

}  // namespace kiln::runtime
