// The dimension relations each HLO instruction makes between its operands
// and its result(s), for kernel_indexing.cc's walk: which dimension of an
// operand runs with which dimension of the result (elementwise ops,
// transposes, broadcasts, reduces, dots, convolutions, batch norm, ...) or
// that two values regroup the same elements (reshape, bitcast). Internal to
// runtime/chip; pure functions over the instructions; thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/opcode.h"
#include "compiler/hlo/shape.h"
#include "runtime/chip/kernel_indexing.h"

namespace kiln::runtime::kernel_edges {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// A value: an array instruction (leaf -1) or element `leaf` of a tuple one.
struct Key {
  const Instruction* instr = nullptr;
  int64_t leaf = -1;
  bool operator==(const Key&) const = default;
};

// A relation between the dimensions of two values of one instruction.
struct Edge {
  enum class Kind { kDims, kRegroup } kind = Kind::kDims;
  Key a, b;
  std::vector<std::pair<int64_t, int64_t>> pairs;  // kDims: (a dim, b dim)
  bool physical = false;  // kRegroup: regroup dims in memory order (bitcast)
  // kDims, parallel to `pairs` when not empty: how b (a window's operand)
  // is read for a (its result); {1, 0} elsewhere.
  std::vector<WindowReach> reach;
};

// The array shape of a value, or nullptr (tokens, nested tuples).
const Shape* ArrayOf(const Key& key);

// The key of an input or output: the array itself or a tuple's first element.
Key BoundaryKey(const Instruction* instr);

// The product of `dims`, each counted as at least 1.
int64_t Product(const std::vector<int64_t>& dims);

// Dimensions 0..rank-1 in neither `a` nor `b` (a dot operand's free ones).
std::vector<int64_t> Others(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Ops whose operands of the result's rank follow it dimension for dimension.
bool KeepsDimensions(Opcode op);

// The dimension relations instruction `instr` makes between its operands
// and its result(s). Structural instructions (tuple, get-tuple-element,
// fusion, call, parameter) are linked elsewhere.
std::vector<Edge> EdgesOf(const Instruction& instr);

}  // namespace kiln::runtime::kernel_edges
