#include "runtime/kernels/scatter_indices.h"

#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"

namespace kiln::runtime {

std::vector<int64_t> IndexBatchDims(const hlo::Shape& indices, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != index_vector_dim) dims.push_back(indices.dimensions(d));
  }
  return dims;
}

Status CheckIndexMapping(const IndexMapping& m, const hlo::Shape& operand,
                         const hlo::Shape& indices) {
  if (m.index_vector_dim < 0 || m.index_vector_dim > indices.rank()) {
    return InvalidArgumentError("index_vector_dim=" + std::to_string(m.index_vector_dim) +
                                " out of range for indices of rank " + std::to_string(indices.rank()));
  }
  const int64_t vector_size =
      m.index_vector_dim == indices.rank() ? 1 : indices.dimensions(m.index_vector_dim);
  if (static_cast<int64_t>(m.index_to_operand.size()) != vector_size) {
    return InvalidArgumentError("index vectors have " + std::to_string(vector_size) + " entries but the index map " +
                                DimsToString(m.index_to_operand) + " has " + std::to_string(m.index_to_operand.size()));
  }
  for (int64_t d : m.index_to_operand) {
    if (d < 0 || d >= operand.rank()) {
      return InvalidArgumentError("index map " + DimsToString(m.index_to_operand) +
                                  " names a dimension outside operand rank " + std::to_string(operand.rank()));
    }
  }
  if (m.operand_batching.size() != m.indices_batching.size()) {
    return InvalidArgumentError("operand and indices batching dims differ in count");
  }
  for (size_t i = 0; i < m.operand_batching.size(); ++i) {
    const int64_t od = m.operand_batching[i], id = m.indices_batching[i];
    if (od < 0 || od >= operand.rank() || id < 0 || id >= indices.rank() ||
        id == m.index_vector_dim || operand.dimensions(od) != indices.dimensions(id)) {
      return InvalidArgumentError("batching dims " + DimsToString(m.operand_batching) + " / " +
                                  DimsToString(m.indices_batching) + " do not match the shapes");
    }
  }
  return Ok();
}

void ReadStart(const hlo::Literal& indices, const IndexMapping& m, std::span<const int64_t> batch,
               std::span<int64_t> start) {
  std::fill(start.begin(), start.end(), 0);
  const int64_t rank = indices.shape().rank();
  const std::vector<int64_t>& dims = indices.shape().dimensions();
  // Linear offset of the batch position with index_vector_dim at 0.
  int64_t base = 0, vector_stride = 0, stride = 1;
  for (int64_t d = rank - 1, b = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    if (d == m.index_vector_dim) {
      vector_stride = stride;
    } else {
      base += batch[b--] * stride;
    }
    stride *= dims[d];
  }
  for (size_t k = 0; k < m.index_to_operand.size(); ++k) {
    start[m.index_to_operand[k]] =
        GetElementAs<int64_t>(indices, base + static_cast<int64_t>(k) * vector_stride);
  }
  for (size_t i = 0; i < m.operand_batching.size(); ++i) {
    const int64_t id = m.indices_batching[i];
    start[m.operand_batching[i]] = batch[id > m.index_vector_dim ? id - 1 : id];
  }
}

}  // namespace kiln::runtime
