// Start-index vectors shared by gather and scatter: reading the operand
// position a batch element of `start_indices` / `scatter_indices` starts at.
//
// Pure functions over borrowed literals; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/literal.h"

namespace kiln::runtime {

// How index vectors map to operand dimensions.
struct IndexMapping {
  int64_t index_vector_dim = 0;
  std::vector<int64_t> index_to_operand;    // start_index_map / scatter_dims_to_operand_dims
  std::vector<int64_t> operand_batching;    // operand_batching_dims / input_batching_dims
  std::vector<int64_t> indices_batching;    // start_indices_batching_dims / ...
};

// Dimensions of the indices without index_vector_dim: the batch shape.
std::vector<int64_t> IndexBatchDims(const hlo::Shape& indices, int64_t index_vector_dim);

// Checks the mapping against the operand and indices shapes; the message says
// what is wrong ("start_index_map {0,2} ...").
Status CheckIndexMapping(const IndexMapping& mapping, const hlo::Shape& operand,
                         const hlo::Shape& indices);

// Writes the unclamped start position in the operand (operand rank entries)
// of the index vector at batch position `batch`.
void ReadStart(const hlo::Literal& indices, const IndexMapping& mapping,
               std::span<const int64_t> batch, std::span<int64_t> start);

}  // namespace kiln::runtime
