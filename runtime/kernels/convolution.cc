// convolution: im2col (patch matrix per block of output positions) followed
// by Eigen GEMM against the kernel arranged as [window x in-features,
// out-features], one GEMM per feature or batch group.

#include <algorithm>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// Upper bound on patch-matrix elements built at once.
constexpr int64_t kPatchBlockElements = int64_t{1} << 22;

// Sizes and strides of one convolution, decoded and checked.
struct ConvGeometry {
  int64_t spatial_rank = 0;
  int64_t out_batch = 0, in_features_per_group = 0, out_features = 0;
  int64_t groups = 1;                   // max(feature_group_count, batch_group_count)
  bool batch_grouped = false;           // groups split the input batch
  std::vector<int64_t> out_spatial;     // output spatial sizes
  std::vector<int64_t> window;          // kernel spatial sizes
  // input_pos[i][o * window[i] + w]: input index of output o, window w along
  // spatial dim i, or -1 when it falls into padding or a dilation hole.
  std::vector<std::vector<int64_t>> input_pos;
  std::vector<bool> reversed;
  // Row-major strides of the dimensions of each part.
  int64_t in_batch_stride = 0, in_feature_stride = 0;
  std::vector<int64_t> in_spatial_strides;
  int64_t k_in_stride = 0, k_out_stride = 0;
  std::vector<int64_t> k_spatial_strides;
  int64_t out_batch_stride = 0, out_feature_stride = 0;
  std::vector<int64_t> out_spatial_strides;
};

Result<ConvGeometry> DecodeGeometry(const hlo::Instruction& instr, const hlo::Shape& lhs,
                                    const hlo::Shape& rhs, const hlo::Shape& out) {
  KILN_ASSIGN_OR_RETURN(hlo::ConvolutionDimensionNumbers dn,
                        hlo::GetConvolutionDimensionNumbers(instr));
  KILN_ASSIGN_OR_RETURN(hlo::Window window, hlo::GetWindow(instr));
  KILN_ASSIGN_OR_RETURN(int64_t feature_groups, hlo::GetFeatureGroupCount(instr));
  KILN_ASSIGN_OR_RETURN(int64_t batch_groups, hlo::GetBatchGroupCount(instr));
  const int64_t n = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (lhs.rank() != dn.input_rank || rhs.rank() != dn.kernel_rank || !out.IsArray() ||
      out.rank() != dn.output_rank) {
    return KernelError(instr, "operand or result rank does not match dim_labels");
  }
  if (static_cast<int64_t>(window.dimensions.size()) != n) {
    return KernelError(instr, "window has " + std::to_string(window.dimensions.size()) +
                                  " dimensions, dim_labels has " + std::to_string(n) +
                                  " spatial dimensions");
  }
  if (feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1)) {
    return KernelError(instr, "feature_group_count and batch_group_count must be >= 1 and "
                              "not both > 1");
  }
  ConvGeometry g;
  g.spatial_rank = n;
  const int64_t in_batch = lhs.dimensions(dn.input_batch_dimension);
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension);
  g.in_features_per_group = rhs.dimensions(dn.kernel_input_feature_dimension);
  g.out_features = rhs.dimensions(dn.kernel_output_feature_dimension);
  g.groups = std::max(feature_groups, batch_groups);
  g.batch_grouped = batch_groups > 1;
  g.out_batch = in_batch / batch_groups;
  if (in_features != g.in_features_per_group * feature_groups ||
      g.out_features % g.groups != 0 || in_batch % batch_groups != 0 ||
      out.dimensions(dn.output_batch_dimension) != g.out_batch ||
      out.dimensions(dn.output_feature_dimension) != g.out_features) {
    return KernelError(instr, "feature or batch sizes of " + lhs.ToString() + " and " +
                                  rhs.ToString() + " do not fit result " + out.ToString() +
                                  " with feature_group_count=" + std::to_string(feature_groups) +
                                  " batch_group_count=" + std::to_string(batch_groups));
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(lhs.dimensions());
  const std::vector<int64_t> k_strides = RowMajorStrides(rhs.dimensions());
  const std::vector<int64_t> out_strides = RowMajorStrides(out.dimensions());
  g.in_batch_stride = in_strides[dn.input_batch_dimension];
  g.in_feature_stride = in_strides[dn.input_feature_dimension];
  g.k_in_stride = k_strides[dn.kernel_input_feature_dimension];
  g.k_out_stride = k_strides[dn.kernel_output_feature_dimension];
  g.out_batch_stride = out_strides[dn.output_batch_dimension];
  g.out_feature_stride = out_strides[dn.output_feature_dimension];
  for (int64_t i = 0; i < n; ++i) {
    const hlo::WindowDimension& wd = window.dimensions[i];
    const int64_t in_size = lhs.dimensions(dn.input_spatial_dimensions[i]);
    const int64_t k_size = rhs.dimensions(dn.kernel_spatial_dimensions[i]);
    const int64_t o_size = out.dimensions(dn.output_spatial_dimensions[i]);
    if (wd.size != k_size || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1) {
      return KernelError(instr, "window dimension " + std::to_string(i) +
                                    " does not match kernel size " + std::to_string(k_size) +
                                    " or has a non-positive stride/dilation");
    }
    g.out_spatial.push_back(o_size);
    g.window.push_back(k_size);
    g.reversed.push_back(wd.window_reversal);
    std::vector<int64_t> pos(o_size * k_size, -1);
    for (int64_t o = 0; o < o_size; ++o) {
      for (int64_t w = 0; w < k_size; ++w) {
        const int64_t p = o * wd.stride + w * wd.window_dilation - wd.padding_low;
        if (p < 0 || p % wd.base_dilation != 0) continue;
        const int64_t q = p / wd.base_dilation;
        if (q < in_size) pos[o * k_size + w] = q;
      }
    }
    g.input_pos.push_back(std::move(pos));
    g.in_spatial_strides.push_back(in_strides[dn.input_spatial_dimensions[i]]);
    g.k_spatial_strides.push_back(k_strides[dn.kernel_spatial_dimensions[i]]);
    g.out_spatial_strides.push_back(out_strides[dn.output_spatial_dimensions[i]]);
  }
  return g;
}

template <typename T>
class ConvolutionRunner {
 public:
  ConvolutionRunner(const ConvGeometry& g, std::vector<T> input, std::vector<T> kernel,
                    int64_t out_count)
      : g_(g), input_(std::move(input)), kernel_(std::move(kernel)), out_(out_count) {
    window_count_ = Product(g_.window);
    rows_ = g_.out_batch * Product(g_.out_spatial);
    cols_ = window_count_ * g_.in_features_per_group;
    out_per_group_ = g_.out_features / g_.groups;
  }

  std::vector<T> Run() {
    if (rows_ == 0 || out_per_group_ == 0) return std::move(out_);
    const int64_t block_rows =
        std::max<int64_t>(1, std::min(rows_, kPatchBlockElements / std::max<int64_t>(1, cols_)));
    GemmOperand<T> patches, weights;
    patches.cols = cols_;
    weights.rows = cols_;
    weights.cols = out_per_group_;
    std::vector<T> product(block_rows * out_per_group_);
    for (int64_t group = 0; group < g_.groups; ++group) {
      BuildWeights(group, weights.data);
      for (int64_t row0 = 0; row0 < rows_; row0 += block_rows) {
        const int64_t rb = std::min(block_rows, rows_ - row0);
        patches.rows = rb;
        BuildPatches(group, row0, rb, patches.data);
        BatchedGemm(patches, weights, 1, product.data());
        ScatterProduct(group, row0, rb, product);
      }
    }
    return std::move(out_);
  }

 private:
  // weights[(w * Ci + ci), oo] = kernel[ci, group * Og + oo, w (reversed)].
  void BuildWeights(int64_t group, std::vector<T>& weights) const {
    weights.assign(cols_ * out_per_group_, T{});
    std::vector<int64_t> w(g_.spatial_rank, 0);
    for (int64_t wl = 0; wl < window_count_; ++wl) {
      int64_t base = 0;
      for (int64_t i = 0; i < g_.spatial_rank; ++i) {
        const int64_t k = g_.reversed[i] ? g_.window[i] - 1 - w[i] : w[i];
        base += k * g_.k_spatial_strides[i];
      }
      for (int64_t ci = 0; ci < g_.in_features_per_group; ++ci) {
        T* row = weights.data() + (wl * g_.in_features_per_group + ci) * out_per_group_;
        const T* src = kernel_.data() + base + ci * g_.k_in_stride +
                       group * out_per_group_ * g_.k_out_stride;
        for (int64_t oo = 0; oo < out_per_group_; ++oo) row[oo] = src[oo * g_.k_out_stride];
      }
      NextIndex(g_.window, w);
    }
  }

  // Rows are (output batch, output spatial...) in row-major order.
  void RowIndex(int64_t row, int64_t& batch, std::vector<int64_t>& spatial) const {
    for (int64_t i = g_.spatial_rank - 1; i >= 0; --i) {
      spatial[i] = row % g_.out_spatial[i];
      row /= g_.out_spatial[i];
    }
    batch = row;
  }

  void BuildPatches(int64_t group, int64_t row0, int64_t rb, std::vector<T>& patches) const {
    patches.resize(rb * cols_);
    const int64_t ci_count = g_.in_features_per_group;
    const int64_t feature_base = g_.batch_grouped ? 0 : group * ci_count;
    const int64_t batch_base = g_.batch_grouped ? group * g_.out_batch : 0;
    std::vector<int64_t> o(g_.spatial_rank), w(g_.spatial_rank);
    int64_t batch = 0;
    for (int64_t r = 0; r < rb; ++r) {
      RowIndex(row0 + r, batch, o);
      const T* in_row = input_.data() + (batch_base + batch) * g_.in_batch_stride +
                        feature_base * g_.in_feature_stride;
      T* dst = patches.data() + r * cols_;
      std::fill(w.begin(), w.end(), 0);
      for (int64_t wl = 0; wl < window_count_; ++wl, dst += ci_count) {
        int64_t offset = 0;
        bool valid = true;
        for (int64_t i = 0; i < g_.spatial_rank && valid; ++i) {
          const int64_t p = g_.input_pos[i][o[i] * g_.window[i] + w[i]];
          valid = p >= 0;
          offset += p * g_.in_spatial_strides[i];
        }
        NextIndex(g_.window, w);
        if (!valid) {
          std::fill(dst, dst + ci_count, T{});
          continue;
        }
        const T* src = in_row + offset;
        if (g_.in_feature_stride == 1) {
          std::copy(src, src + ci_count, dst);
        } else {
          for (int64_t ci = 0; ci < ci_count; ++ci) dst[ci] = src[ci * g_.in_feature_stride];
        }
      }
    }
  }

  void ScatterProduct(int64_t group, int64_t row0, int64_t rb, const std::vector<T>& product) {
    std::vector<int64_t> o(g_.spatial_rank);
    int64_t batch = 0;
    for (int64_t r = 0; r < rb; ++r) {
      RowIndex(row0 + r, batch, o);
      T* dst = out_.data() + batch * g_.out_batch_stride +
               group * out_per_group_ * g_.out_feature_stride +
               LinearIndex(g_.out_spatial_strides, o);
      const T* src = product.data() + r * out_per_group_;
      for (int64_t oo = 0; oo < out_per_group_; ++oo) dst[oo * g_.out_feature_stride] = src[oo];
    }
  }

  const ConvGeometry& g_;
  std::vector<T> input_, kernel_, out_;
  int64_t window_count_ = 0, rows_ = 0, cols_ = 0, out_per_group_ = 0;
};

}  // namespace

Result<hlo::Literal> EvalConvolution(const hlo::Instruction& instr, Operands operands,
                                     EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  const hlo::Shape& out_shape = instr.shape();
  KILN_ASSIGN_OR_RETURN(ConvGeometry geometry,
                        DecodeGeometry(instr, operands[0]->shape(), operands[1]->shape(),
                                       out_shape));
  KILN_RETURN_IF_ERROR(ctx.Charge(out_shape.ElementCount()));
  return VisitComputeType(out_shape.element_type(), [&]<typename T>(T) {
    ConvolutionRunner<T> runner(geometry, ElementsAs<T>(*operands[0]),
                                ElementsAs<T>(*operands[1]), out_shape.ElementCount());
    std::vector<T> values = runner.Run();
    hlo::Literal result(out_shape);
    StoreElements<T>(values, result);
    return result;
  });
}

}  // namespace kiln::runtime
