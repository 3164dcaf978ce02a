// The value of one instruction during evaluation: an array literal shared
// by reference, or a tuple of values.
//
// Values are immutable once made and cheap to copy (tuple and
// get-tuple-element share their elements instead of copying arrays). A
// Value either shares ownership of its literal or borrows one the caller
// keeps alive for the whole evaluation (arguments). Not thread-safe across
// evaluations: reference counts are shared, so one evaluation owns its
// values.
#pragma once

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

  // The value as a literal: the array itself when this Value is its only
  // owner (moved out), else a copy; tuples are assembled.
  hlo::Literal TakeLiteral() &&;
  hlo::Literal ToLiteral() const;

 private:
  std::shared_ptr<hlo::Literal> array_;
  std::shared_ptr<const std::vector<Value>> tuple_;
};

}  // namespace kiln::runtime
