// Shapes and layouts of HLO values.
//
// A Shape is an array (element type, dimensions, layout), a tuple of shapes,
// or a token/opaque value. Dimensions may be dynamic: bounded (`<=N`, the
// bound kept in dims) or unbounded (`?`, stored as kUnboundedDim). Every array
// shape produced by the parser carries a layout; a missing one is filled with
// the default major-to-minor layout, as XLA does.
//
// Plain values, thread-compatible. A copy shares the original's storage
// (a reference count, no allocation) until one of them changes; copies may
// be made and dropped on several threads at once. A reference a shape
// returns (dimensions(), layout(), tuple_shapes()) stays valid until that
// shape is changed, assigned or destroyed.
#pragma once

#include <atomic>
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

  // Copies share one representation; the first change to a shared copy
  // gives it its own. A moved-from shape reads as Shape().
  Shape(const Shape& other) noexcept : rep_(other.rep_) { Ref(rep_); }
  Shape(Shape&& other) noexcept : rep_(other.rep_) { other.rep_ = nullptr; }
  Shape& operator=(const Shape& other) noexcept {
    Rep* r = other.rep_;  // `other` may live inside this shape's tuple
    Ref(r);
    Unref(rep_);
    rep_ = r;
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    Rep* r = other.rep_;
    other.rep_ = nullptr;
    Unref(rep_);
    rep_ = r;
    return *this;
  }
  ~Shape() { Unref(rep_); }

  PrimitiveType element_type() const;
  bool IsArray() const { return IsArrayType(element_type()); }
  bool IsTuple() const { return element_type() == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type() == PrimitiveType::kToken; }
  bool IsBuffer() const { return element_type() == PrimitiveType::kBuffer; }

  int64_t rank() const;
  const std::vector<int64_t>& dimensions() const;
  int64_t dimensions(int64_t i) const;
  bool is_dynamic_dimension(int64_t i) const { return (dynamic_mask() >> i) & 1; }
  bool is_static() const;
  uint64_t dynamic_mask() const;

  const Layout& layout() const;
  Layout& mutable_layout();
  bool has_default_layout() const;

  const std::vector<Shape>& tuple_shapes() const;
  const Shape& tuple_shapes(int64_t i) const;

  void set_element_type(PrimitiveType t);
  void set_dimensions(std::vector<int64_t> dims);  // resets layout to default
  void set_dynamic_dimension(int64_t i, bool dynamic);
  std::vector<Shape>& mutable_tuple_shapes();

  // Number of elements of an array shape (bounds for dynamic dims); -1 when
  // the product overflows int64 or a dimension is unbounded.
  int64_t ElementCount() const;
  // Bytes of an array shape on the host (sub-byte types: one byte each);
  // -1 on overflow.
  int64_t ByteSize() const;

  // Exact equality: type, dimensions, dynamism, layout, tuple elements.
  bool operator==(const Shape& other) const;
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
  struct Rep;
  // What Shape() reads (rep_ is null until a shape is given a value):
  // made once, never changed or freed.
  static const Rep& EmptyRep();
  static void Ref(Rep* rep);
  static void Unref(Rep* rep);
  // This shape's own representation, copied first when it is shared.
  Rep& Mutable();

  // For arena instructions (instruction.h) alone: a shape reading `owner`'s
  // representation without counting a reference, valid while something
  // else (the instruction's arena) keeps `owner`; and letting go of such a
  // shape without releasing it.
  friend class Instruction;
  static Shape Borrow(const Shape& owner) {
    Shape borrowed;
    borrowed.rep_ = owner.rep_;
    return borrowed;
  }
  void Forget() { rep_ = nullptr; }

  Rep* rep_ = nullptr;
};

struct Shape::Rep {
  std::atomic<int64_t> refs{1};
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  uint64_t dynamic_mask = 0;
  Layout layout;
  std::vector<Shape> tuple;

  Rep() = default;
  Rep(const Rep& other)
      : type(other.type), dims(other.dims), dynamic_mask(other.dynamic_mask),
        layout(other.layout), tuple(other.tuple) {}
};

inline const Shape::Rep& Shape::EmptyRep() {
  static const Rep* const empty = new Rep();
  return *empty;
}
inline void Shape::Ref(Rep* rep) {
  if (rep != nullptr) rep->refs.fetch_add(1, std::memory_order_relaxed);
}
inline void Shape::Unref(Rep* rep) {
  if (rep != nullptr && rep->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep;
}

inline PrimitiveType Shape::element_type() const {
  return rep_ != nullptr ? rep_->type : PrimitiveType::kInvalid;
}
inline int64_t Shape::rank() const {
  return rep_ != nullptr ? static_cast<int64_t>(rep_->dims.size()) : 0;
}
inline const std::vector<int64_t>& Shape::dimensions() const {
  return rep_ != nullptr ? rep_->dims : EmptyRep().dims;
}
inline int64_t Shape::dimensions(int64_t i) const { return rep_->dims[i]; }
inline uint64_t Shape::dynamic_mask() const { return rep_ != nullptr ? rep_->dynamic_mask : 0; }
inline const Layout& Shape::layout() const {
  return rep_ != nullptr ? rep_->layout : EmptyRep().layout;
}
inline const std::vector<Shape>& Shape::tuple_shapes() const {
  return rep_ != nullptr ? rep_->tuple : EmptyRep().tuple;
}
inline const Shape& Shape::tuple_shapes(int64_t i) const { return rep_->tuple[i]; }

}  // namespace kiln::hlo
