// convolution: im2col (patch matrix per block of output positions) followed
// by Eigen GEMM against the kernel arranged as [window x in-features,
// out-features], one GEMM per feature or batch group.

#include <algorithm>
#include <memory>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// Upper bound on patch-matrix elements built at once.
constexpr int64_t kPatchBlockElements = int64_t{1} << 20;

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

// `count` elements of scratch the calling thread reuses from block to block
// and call to call (slot 0: patches, 1: their product), unwritten. A block
// holds at most about kPatchBlockElements patch elements, so each thread
// keeps a few MiB.
template <typename T>
T* ThreadScratch(int slot, int64_t count) {
  thread_local std::unique_ptr<T[]> buffers[2];
  thread_local int64_t sizes[2] = {0, 0};
  if (sizes[slot] < count) {
    buffers[slot] = std::make_unique_for_overwrite<T[]>(count);
    sizes[slot] = count;
  }
  return buffers[slot].get();
}

// Elements of an operand as T: in place, or converted into `owned`.
template <typename T>
struct ConvOperand {
  std::vector<T> owned;
  const T* data = nullptr;

  explicit ConvOperand(const hlo::Literal& lit) : data(ElementsInPlace<T>(lit)) {
    if (data == nullptr) {
      owned = ElementsAs<T>(lit);
      data = owned.data();
    }
  }
};

// Runs one convolution into `out` (row-major over the result, every element
// written). Blocks of patch rows are independent parts: each builds its
// patches, multiplies them by its group's weights and scatters the product
// into its own output rows, on the calling thread and idle host cores
// (base/host_cores.h). Block sizes depend on the shapes alone, so results do
// not change with the number of threads.
template <typename T>
class ConvolutionRunner {
 public:
  ConvolutionRunner(const ConvGeometry& g, const T* input, const T* kernel, T* out)
      : g_(g), input_(input), kernel_(kernel), out_(out) {
    window_count_ = Product(g_.window);
    rows_ = g_.out_batch * Product(g_.out_spatial);
    cols_ = window_count_ * g_.in_features_per_group;
    out_per_group_ = g_.out_features / g_.groups;
  }

  void Run() {
    if (rows_ == 0 || out_per_group_ == 0) return;
    const int64_t block_rows =
        std::max<int64_t>(1, std::min(rows_, kPatchBlockElements / std::max<int64_t>(1, cols_)));
    const int64_t blocks = (rows_ + block_rows - 1) / block_rows;
    std::vector<std::vector<T>> weights(g_.groups);
    for (int64_t group = 0; group < g_.groups; ++group) BuildWeights(group, weights[group]);
    auto run_block = [&](int64_t part) {
      const int64_t group = part / blocks;
      const int64_t row0 = (part % blocks) * block_rows;
      const int64_t rb = std::min(block_rows, rows_ - row0);
      T* patches = ThreadScratch<T>(0, rb * cols_);
      T* product = ThreadScratch<T>(1, rb * out_per_group_);
      BuildPatches(group, row0, rb, patches);
      Gemm<T>({patches, rb, cols_}, {weights[group].data(), cols_, out_per_group_},
              {product, rb, out_per_group_});
      ScatterProduct(group, row0, rb, product);
    };
    const double macs = static_cast<double>(rows_) * static_cast<double>(cols_) *
                        static_cast<double>(out_per_group_) * static_cast<double>(g_.groups);
    if (macs < static_cast<double>(kGemmMinPartMacs)) {
      for (int64_t part = 0; part < g_.groups * blocks; ++part) run_block(part);
    } else {
      HostCores::Get().ParallelFor(g_.groups * blocks, run_block);
    }
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
        const T* src = kernel_ + base + ci * g_.k_in_stride +
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

  // Writes every element of patches[0, rb * cols_).
  void BuildPatches(int64_t group, int64_t row0, int64_t rb, T* patches) const {
    const int64_t ci_count = g_.in_features_per_group;
    const int64_t feature_base = g_.batch_grouped ? 0 : group * ci_count;
    const int64_t batch_base = g_.batch_grouped ? group * g_.out_batch : 0;
    std::vector<int64_t> o(g_.spatial_rank), w(g_.spatial_rank);
    int64_t batch = 0;
    for (int64_t r = 0; r < rb; ++r) {
      RowIndex(row0 + r, batch, o);
      const T* in_row = input_ + (batch_base + batch) * g_.in_batch_stride +
                        feature_base * g_.in_feature_stride;
      T* dst = patches + r * cols_;
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

  void ScatterProduct(int64_t group, int64_t row0, int64_t rb, const T* product) const {
    std::vector<int64_t> o(g_.spatial_rank);
    int64_t batch = 0;
    for (int64_t r = 0; r < rb; ++r) {
      RowIndex(row0 + r, batch, o);
      T* dst = out_ + batch * g_.out_batch_stride +
               group * out_per_group_ * g_.out_feature_stride +
               LinearIndex(g_.out_spatial_strides, o);
      const T* src = product + r * out_per_group_;
      for (int64_t oo = 0; oo < out_per_group_; ++oo) dst[oo * g_.out_feature_stride] = src[oo];
    }
  }

  const ConvGeometry& g_;
  const T* input_;
  const T* kernel_;
  T* out_;
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
    const ConvOperand<T> input(*operands[0]), kernel(*operands[1]);
    // Every output element lies in exactly one block's rows and one group's
    // features, so the runner writes each.
    hlo::Literal result = hlo::Literal::Uninitialized(out_shape);
    if (T* in_place = MutableElementsInPlace<T>(result)) {
      ConvolutionRunner<T>(geometry, input.data, kernel.data, in_place).Run();
      return result;
    }
    std::vector<T> values(out_shape.ElementCount());
    ConvolutionRunner<T>(geometry, input.data, kernel.data, values.data()).Run();
    StoreElements<T>(values, result);
    return result;
  });
}

}  // namespace kiln::runtime
