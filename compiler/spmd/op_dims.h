// How ops relate their operands' dimensions to their result's, for
// carrying tiles through them: a dot's result dimensions come from batch
// dimensions of both operands, then the lhs's free dimensions, then the
// rhs's (XLA's order); slice, pad, dynamic-slice and concatenate keep some
// dimensions whole; a gather's batch dimensions are its indices'. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::spmd {

struct DotDims {
  // For result dimension j: the lhs / rhs dimension it comes from, -1 when
  // it comes from the other operand only.
  std::vector<int64_t> result_lhs;
  std::vector<int64_t> result_rhs;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_contracting;
  int64_t lhs_rank = 0;
  int64_t rhs_rank = 0;

  // For each lhs (rhs) dimension, the result dimension it becomes; -1 for
  // contracting dimensions.
  std::vector<int64_t> LhsFromResult() const;
  std::vector<int64_t> RhsFromResult() const;
};

// Fails on a dot whose dimension numbers do not fit its operands.
Result<DotDims> DotDimsOf(const hlo::Instruction& dot);

// The dimensions of operand 0 that slice, pad, dynamic-slice and
// concatenate keep whole, as a map for Remap: entry j is j when dimension j
// is kept whole, else -1. nullopt for other ops (and bad attributes).
std::optional<std::vector<int64_t>> WholeDims(const hlo::Instruction& instr);

// For each result dimension of a gather, the start-indices dimension it is
// a batch position of, or -1 for an offset (slice) dimension; a result is
// gathered where its indices lie, so tiles of those dimensions carry
// through. nullopt for a gather with operand batching dimensions (or bad
// attributes).
std::optional<std::vector<int64_t>> GatherBatchSource(const hlo::Instruction& gather);

}  // namespace kiln::spmd
