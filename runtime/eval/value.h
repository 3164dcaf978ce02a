// The value of one instruction during evaluation: an array literal shared
// by reference, or a tuple of values. An array whose shape has dynamic
// dimensions keeps its bound-shaped (padded) literal plus the actual size of
// each dimension (runtime/eval/dynamic_shapes.h).
//
// Values are immutable once made and cheap to copy (tuple and
// get-tuple-element share their elements instead of copying arrays). A
// Value either shares ownership of its literal or borrows one the caller
// keeps alive for the whole evaluation (arguments). Not thread-safe across
// evaluations: reference counts are shared, so one evaluation owns its
// values.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/hlo/literal.h"

namespace kiln::runtime {

class Value {
 public:
  Value() = default;
  // Takes ownership of an array (or token) literal.
  static Value Own(hlo::Literal literal);
  // Refers to `literal` without owning it (tuples are split into elements).
  static Value Borrow(const hlo::Literal& literal);
  static Value Tuple(std::vector<Value> elements);

  bool is_tuple() const { return tuple_ != nullptr; }
  bool empty() const { return array_ == nullptr && tuple_ == nullptr; }
  // The array literal (not for tuples).
  const hlo::Literal& array() const { return *array_; }
  const std::vector<Value>& elements() const { return *tuple_; }

  // The actual size of each dimension of a dynamic array (the literal holds
  // the leading part of each dimension, the rest is padding); empty for
  // static values.
  const std::vector<int64_t>& dynamic_sizes() const { return dynamic_sizes_; }
  bool is_dynamic() const { return !dynamic_sizes_.empty(); }
  // The same array with the given actual sizes (one per dimension).
  Value WithDynamicSizes(std::vector<int64_t> sizes) const;

  // The value as a literal: the array itself when this Value is its only
  // owner (moved out), else a copy; tuples are assembled.
  hlo::Literal TakeLiteral() &&;
  hlo::Literal ToLiteral() const;

 private:
  std::shared_ptr<hlo::Literal> array_;
  std::shared_ptr<const std::vector<Value>> tuple_;
  std::vector<int64_t> dynamic_sizes_;
};

}  // namespace kiln::runtime
