// Literal values: the data of `constant` instructions and of the corpus's
// argument and result files.
//
// A Literal owns its bytes. Array elements are stored in logical row-major
// order (dimension 0 outermost) regardless of the shape's layout, one host
// element each (HostByteWidth: sub-byte types take a byte, f16/bf16/f8 keep
// their bit patterns, pred is 0/1, complex is (re, im)). A literal written as
// `{...}` in HLO text has no data: elided() is true. Plain value; copyable,
// thread-compatible.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/hlo/shape.h"

namespace kiln::hlo {

class Literal {
 public:
  Literal() = default;
  // A zero-filled array literal (shape must be an array with a valid count).
  explicit Literal(Shape shape);
  static Literal Tuple(std::vector<Literal> elements);
  static Literal Elided(Shape shape);
  // An array literal over `data` (HostByteWidth bytes per element, row-major).
  static Literal FromData(Shape shape, std::vector<uint8_t> data);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }

  // Raw element bytes (array literals).
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>& mutable_data() { return data_; }
  int64_t element_count() const;

  template <typename T>
  T Get(int64_t i) const {
    T v;
    std::memcpy(&v, data_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  void Set(int64_t i, T v) {
    std::memcpy(data_.data() + i * sizeof(T), &v, sizeof(T));
  }

  // Element i widened to double (floats, ints, pred); complex gives re.
  double GetAsDouble(int64_t i) const;

  // HLO text of the value without its shape: "{1, 2}", "3", "(1, {2})".
  std::string ValueToString() const;
  // "f32[2] {1, 2}" / "(f32[] 1, s32[] 2)", the form of the corpus sidecars.
  std::string ToString() const;

  // Bitwise equality of shapes (ignoring layouts) and data.
  bool operator==(const Literal& other) const;

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
  bool elided_ = false;
};

// Appends element i of an array literal as HLO text ("1.5", "true", "-inf",
// "(1, 0)").
void AppendLiteralElement(const Literal& lit, int64_t i, std::string& out);

}  // namespace kiln::hlo
