// Shapes and layouts of HLO values.
//
// A Shape is an array (element type, dimensions, layout), a tuple of shapes,
// or a token/opaque value. Dimensions may be dynamic: bounded (`<=N`, the
// bound kept in dims) or unbounded (`?`, stored as kUnboundedDim). Every array
// shape produced by the parser carries a layout; a missing one is filled with
// the default major-to-minor layout, as XLA does. Plain values: copyable,
// thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/primitive_type.h"

namespace kiln::hlo {

inline constexpr int64_t kUnboundedDim = -1;
// A tile dimension printed as `*`: combine with the next minor dimension.
inline constexpr int64_t kCombineTileDim = INT64_MIN;
inline constexpr int kMaxRank = 64;

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<std::vector<int64_t>> tiles;  // T(8,128)(2,1)
  int64_t tail_padding_alignment = 1;       // L(n)
  int64_t element_size_bits = 0;            // E(n); 0 = natural size
  int64_t memory_space = 0;                 // S(n)
  // Rarely used extras (D(...), #(...), *(...), SC(...), P(...), M(...)) kept
  // as canonical text in the order they were written.
  std::string other;

  bool operator==(const Layout&) const = default;
  // True when only minor_to_major is set.
  bool IsPlain() const;
};

class Shape;

// How big a shape is as a tree: `nodes` counts the shape and every tuple or
// buffer element at any depth; `levels` is 1 for an array, token or empty
// tuple and one more than the deepest element otherwise. Measured without
// recursion, so it is safe on a shape of any depth.
struct ShapeExtent {
  int64_t nodes = 0;
  int64_t levels = 0;
};
ShapeExtent MeasureShape(const Shape& shape);

class Shape {
 public:
  Shape() = default;
  // An array shape with the default layout.
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(PrimitiveType::kToken, {}); }
  // b(f32[2]): a buffer of an array (tuple_shapes(0) is the array).
  static Shape Buffer(Shape element);

  PrimitiveType element_type() const { return type_; }
  bool IsArray() const { return IsArrayType(type_); }
  bool IsTuple() const { return type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return type_ == PrimitiveType::kToken; }
  bool IsBuffer() const { return type_ == PrimitiveType::kBuffer; }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  bool is_dynamic_dimension(int64_t i) const { return (dynamic_mask_ >> i) & 1; }
  bool is_static() const;
  uint64_t dynamic_mask() const { return dynamic_mask_; }

  const Layout& layout() const { return layout_; }
  Layout& mutable_layout() { return layout_; }
  bool has_default_layout() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[i]; }

  void set_element_type(PrimitiveType t) { type_ = t; }
  void set_dimensions(std::vector<int64_t> dims);  // resets layout to default
  void set_dynamic_dimension(int64_t i, bool dynamic);
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }

  // Number of elements of an array shape (bounds for dynamic dims); -1 when
  // the product overflows int64 or a dimension is unbounded.
  int64_t ElementCount() const;
  // Bytes of an array shape on the host (sub-byte types: one byte each);
  // -1 on overflow.
  int64_t ByteSize() const;

  // Exact equality: type, dimensions, dynamism, layout, tuple elements.
  bool operator==(const Shape&) const = default;
  // Equality ignoring layouts (XLA's ShapeUtil::Compatible, roughly).
  bool Compatible(const Shape& other) const;
  // Same element type and dimensions (not layout); for arrays only.
  bool SameDimensions(const Shape& other) const;

  // HLO text: "f32[2,3]{1,0}", "(s32[], bf16[4])". Layouts are printed
  // unless they are the default one and print_default_layout is false.
  std::string ToString(bool print_default_layout = false) const;
  void AppendTo(std::string& out, bool print_default_layout = false) const;

  static std::vector<int64_t> DefaultMinorToMajor(int64_t rank);

 private:
  PrimitiveType type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  uint64_t dynamic_mask_ = 0;
  Layout layout_;
  std::vector<Shape> tuple_;
};

}  // namespace kiln::hlo
