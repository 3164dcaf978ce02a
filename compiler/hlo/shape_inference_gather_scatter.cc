// Shape inference for gather and scatter (shape_inference.h).
#include "compiler/hlo/shape_inference.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/hlo/shape_inference_util.h"

namespace kiln::hlo {

using shape_inference_internal::Dims;
using shape_inference_internal::Str;
using shape_inference_internal::Join;
using shape_inference_internal::ExpectArray;
using shape_inference_internal::Contains;
using shape_inference_internal::CheckDimList;
using shape_inference_internal::Dim;
using shape_inference_internal::DimOf;
using shape_inference_internal::MakeArray;
using shape_inference_internal::SizesMatch;

namespace {

// Shared by gather and scatter: the index vector dimension and the indices'
// batch dimensions (all dimensions but index_vector_dim, which is implicit
// and of size 1 when it equals the rank).
struct IndexShape {
  std::vector<Dim> batch;  // indices dims without index_vector_dim
  Dim index_vector;        // size of index_vector_dim (1 if implicit)
};

Result<IndexShape> DecomposeIndices(const Shape& indices, int64_t index_vector_dim,
                                    const char* op) {
  KILN_RETURN_IF_ERROR(ExpectArray(indices, std::string(op) + " indices"));
  if (!IsInteger(indices.element_type())) {
    return InvalidArgumentError(std::string(op) + " indices must be integers, got " + Str(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return InvalidArgumentError("index_vector_dim " + std::to_string(index_vector_dim) +
                                " is out of range for indices " + Str(indices));
  }
  IndexShape out{{}, {1, false}};
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i == index_vector_dim) {
      out.index_vector = DimOf(indices, i);
    } else {
      out.batch.push_back(DimOf(indices, i));
    }
  }
  return out;
}

// Batching dims: operand-side list and indices-side list must pair up with
// equal sizes, and must not be index_vector_dim.
Status CheckBatchingDims(const Shape& operand, Dims operand_dims, const Shape& indices,
                         Dims index_dims, int64_t index_vector_dim, const char* op_side,
                         const char* index_side) {
  KILN_RETURN_IF_ERROR(CheckDimList(operand_dims, operand.rank(), op_side, /*sorted=*/true));
  KILN_RETURN_IF_ERROR(CheckDimList(index_dims, indices.rank(), index_side));
  if (operand_dims.size() != index_dims.size()) {
    return InvalidArgumentError(std::string(op_side) + " and " + index_side + " must have equal length");
  }
  for (size_t i = 0; i < index_dims.size(); ++i) {
    if (index_dims[i] == index_vector_dim) {
      return InvalidArgumentError(std::string(index_side) + " must not contain index_vector_dim");
    }
    if (!SizesMatch(operand, operand_dims[i], indices, index_dims[i])) {
      return InvalidArgumentError("operand batching dimension " + std::to_string(operand_dims[i]) + " has size " +
                                  std::to_string(operand.dimensions(operand_dims[i])) +
                                  " but indices batching dimension " + std::to_string(index_dims[i]) + " has size " +
                                  std::to_string(indices.dimensions(index_dims[i])));
    }
  }
  return Ok();
}

// The index vector must have one entry per mapped operand dimension.
Status CheckIndexMap(Dims map, const Dim& index_vector, const Shape& operand, Dims batching,
                     const char* name) {
  if (!index_vector.dynamic && static_cast<int64_t>(map.size()) != index_vector.size) {
    return InvalidArgumentError(std::string(name) + " " + Join(map) + " has " + std::to_string(map.size()) +
                                " entries but the index vector has size " + std::to_string(index_vector.size));
  }
  KILN_RETURN_IF_ERROR(CheckDimList(map, operand.rank(), name));
  for (int64_t d : map) {
    if (Contains(batching, d)) {
      return InvalidArgumentError(std::string(name) + " must not contain batching dimension " + std::to_string(d));
    }
  }
  return Ok();
}

}  // namespace

Result<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                               const GatherDimensionNumbers& d, Dims slice_sizes) {
  KILN_RETURN_IF_ERROR(ExpectArray(operand, "gather operand"));
  KILN_ASSIGN_OR_RETURN(IndexShape idx,
                        DecomposeIndices(start_indices, d.index_vector_dim, "gather"));
  const int64_t out_rank = static_cast<int64_t>(d.offset_dims.size() + idx.batch.size());
  KILN_RETURN_IF_ERROR(CheckDimList(d.offset_dims, out_rank, "offset_dims", /*sorted=*/true));
  KILN_RETURN_IF_ERROR(
      CheckDimList(d.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims", true));
  KILN_RETURN_IF_ERROR(CheckBatchingDims(operand, d.operand_batching_dims, start_indices,
                                         d.start_indices_batching_dims, d.index_vector_dim,
                                         "operand_batching_dims", "start_indices_batching_dims"));
  KILN_RETURN_IF_ERROR(CheckIndexMap(d.start_index_map, idx.index_vector, operand,
                                     d.operand_batching_dims, "start_index_map"));
  for (int64_t c : d.collapsed_slice_dims) {
    if (Contains(d.operand_batching_dims, c)) {
      return InvalidArgumentError("dimension " + std::to_string(c) + " is both collapsed and batching");
    }
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArgumentError("slice_sizes " + Join(slice_sizes) + " must have one entry per operand dimension of " +
                                Str(operand));
  }
  if (slice_sizes.size() !=
      d.offset_dims.size() + d.collapsed_slice_dims.size() + d.operand_batching_dims.size()) {
    return InvalidArgumentError(
        "offset_dims, collapsed_slice_dims and operand_batching_dims must "
        "together cover the operand rank " +
        std::to_string(operand.rank()));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 ||
        (!IsDynamicDimension(operand, i) && slice_sizes[i] > operand.dimensions(i))) {
      return InvalidArgumentError("slice size " + std::to_string(slice_sizes[i]) + " of dimension " +
                                  std::to_string(i) + " is out of range for operand " + Str(operand));
    }
    if ((Contains(d.collapsed_slice_dims, i) || Contains(d.operand_batching_dims, i)) &&
        slice_sizes[i] > 1) {
      return InvalidArgumentError("collapsed or batching dimension " + std::to_string(i) +
                                  " must have slice size 0 or 1, has " + std::to_string(slice_sizes[i]));
    }
  }
  std::vector<Dim> dims;
  int64_t operand_dim = 0;
  size_t batch_dim = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (Contains(d.offset_dims, i)) {
      while (Contains(d.collapsed_slice_dims, operand_dim) ||
             Contains(d.operand_batching_dims, operand_dim)) {
        ++operand_dim;
      }
      const int64_t size = slice_sizes[operand_dim];
      dims.push_back({size, size == operand.dimensions(operand_dim) &&
                                IsDynamicDimension(operand, operand_dim)});
      ++operand_dim;
    } else {
      dims.push_back(idx.batch[batch_dim++]);
    }
  }
  return MakeArray(operand.element_type(), dims);
}

Result<Shape> InferScatterShape(std::span<const Shape> operands, const ScatterDimensionNumbers& d,
                                const ProgramShape& reducer) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return InvalidArgumentError("scatter needs 2N+1 operands (N >= 1), has " + std::to_string(operands.size()));
  }
  const size_t n = operands.size() / 2;
  const Shape& indices = operands[n];
  KILN_ASSIGN_OR_RETURN(IndexShape idx, DecomposeIndices(indices, d.index_vector_dim, "scatter"));
  std::vector<Shape> inits;
  std::vector<PrimitiveType> update_types;
  for (size_t k = 0; k < n; ++k) {
    const Shape& operand = operands[k];
    const Shape& updates = operands[n + 1 + k];
    KILN_RETURN_IF_ERROR(ExpectArray(operand, "scatter operand"));
    KILN_RETURN_IF_ERROR(ExpectArray(updates, "scatter updates"));
    if (!SameDimensions(operand, operands[0]) || !SameDimensions(updates, operands[n + 1])) {
      return InvalidArgumentError("scatter operands (and updates) must have equal dimensions");
    }
    KILN_RETURN_IF_ERROR(
        CheckDimList(d.update_window_dims, updates.rank(), "update_window_dims", true));
    KILN_RETURN_IF_ERROR(
        CheckDimList(d.inserted_window_dims, operand.rank(), "inserted_window_dims", true));
    KILN_RETURN_IF_ERROR(CheckBatchingDims(operand, d.input_batching_dims, indices,
                                           d.scatter_indices_batching_dims, d.index_vector_dim,
                                           "input_batching_dims", "scatter_indices_batching_dims"));
    for (int64_t c : d.inserted_window_dims) {
      if (Contains(d.input_batching_dims, c)) {
        return InvalidArgumentError("dimension " + std::to_string(c) + " is both inserted and batching");
      }
    }
    if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                             d.input_batching_dims.size()) != operand.rank()) {
      return InvalidArgumentError(
          "update_window_dims, inserted_window_dims and input_batching_dims must "
          "together cover the operand rank " +
          std::to_string(operand.rank()));
    }
    KILN_RETURN_IF_ERROR(CheckIndexMap(d.scatter_dims_to_operand_dims, idx.index_vector, operand,
                                       d.input_batching_dims, "scatter_dims_to_operand_dims"));
    const int64_t expected_rank =
        static_cast<int64_t>(idx.batch.size() + d.update_window_dims.size());
    if (updates.rank() != expected_rank) {
      return InvalidArgumentError("updates " + Str(updates) + " must have rank " + std::to_string(expected_rank));
    }
    int64_t operand_dim = 0;
    size_t window = 0, batch = 0;
    for (int64_t i = 0; i < updates.rank(); ++i) {
      if (window < d.update_window_dims.size() && d.update_window_dims[window] == i) {
        ++window;
        while (Contains(d.inserted_window_dims, operand_dim) ||
               Contains(d.input_batching_dims, operand_dim)) {
          ++operand_dim;
        }
        if (!IsDynamicDimension(updates, i) && !IsDynamicDimension(operand, operand_dim) &&
            updates.dimensions(i) > operand.dimensions(operand_dim)) {
          return InvalidArgumentError("updates window dimension " + std::to_string(i) + " has size " +
                                      std::to_string(updates.dimensions(i)) + ", larger than operand dimension " +
                                      std::to_string(operand_dim) + " of size " +
                                      std::to_string(operand.dimensions(operand_dim)));
        }
        ++operand_dim;
      } else {
        const Dim& b = idx.batch[batch++];
        if (!IsDynamicDimension(updates, i) && !b.dynamic && updates.dimensions(i) != b.size) {
          return InvalidArgumentError("updates scatter dimension " + std::to_string(i) + " has size " +
                                      std::to_string(updates.dimensions(i)) +
                                      " but the matching indices dimension has size " + std::to_string(b.size));
        }
      }
    }
    inits.push_back(Shape(operand.element_type(), {}));
    update_types.push_back(updates.element_type());
  }
  KILN_RETURN_IF_ERROR(VerifyReducer(reducer, inits, update_types));
  if (n == 1) return operands[0];
  return InferTupleShape(operands.first(n));
}

}  // namespace kiln::hlo
