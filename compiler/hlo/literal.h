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

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "compiler/hlo/shape.h"

namespace kiln::hlo {

// Storage of literal bytes. Blocks of kLiteralLargeBlockBytes or more are
// mapped directly; when freed, up to 256 MB of them are kept and handed to
// later literals of the same rounded size, so a repeated evaluation does not
// fault in and zero its result's pages again. Smaller blocks come from
// operator new. Allocation throws std::bad_alloc like operator new.
// Thread-safe.
inline constexpr size_t kLiteralLargeBlockBytes = size_t{4} << 20;
void* AllocateLiteralBytes(size_t bytes);
void FreeLiteralBytes(void* p, size_t bytes);

// A std::allocator replacement for literal bytes: allocates as above and
// default-initializes new elements, so growing a LiteralBytes leaves them
// unwritten (Literal(Shape) still zero-fills explicitly).
template <typename T>
class LiteralAllocator {
 public:
  using value_type = T;
  LiteralAllocator() = default;
  template <typename U>
  LiteralAllocator(const LiteralAllocator<U>&) noexcept {}

  T* allocate(size_t n) { return static_cast<T*>(AllocateLiteralBytes(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { FreeLiteralBytes(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const LiteralAllocator<U>&) const noexcept {
    return true;
  }
};

using LiteralBytes = std::vector<uint8_t, LiteralAllocator<uint8_t>>;

class Literal {
 public:
  Literal() = default;
  // A zero-filled array literal (shape must be an array with a valid count).
  explicit Literal(Shape shape);
  // An array literal whose bytes are unspecified, for producers that write
  // every element (skips the zero-fill pass over large results).
  static Literal Uninitialized(Shape shape);
  static Literal Tuple(std::vector<Literal> elements);
  static Literal Elided(Shape shape);
  // An array literal of `shape` holding `scalar` (a rank-0 literal of the
  // same element type) in every element. Filled by doubling block copies,
  // not per element.
  static Literal Splat(Shape shape, const Literal& scalar);
  // An array literal over `data` (HostByteWidth bytes per element, row-major).
  static Literal FromData(Shape shape, LiteralBytes data);
  static Literal FromData(Shape shape, const std::vector<uint8_t>& data);  // copies

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  // Moves the elements of a tuple literal out (leaving it with none), for an
  // owner that takes the literal apart without copying its arrays.
  std::vector<Literal> ReleaseTupleElements() { return std::move(tuple_); }

  // Raw element bytes (array literals).
  const LiteralBytes& data() const { return data_; }
  LiteralBytes& mutable_data() { return data_; }
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
  LiteralBytes data_;
  std::vector<Literal> tuple_;
  bool elided_ = false;
};

// Appends element i of an array literal as HLO text ("1.5", "true", "-inf",
// "(1, 0)").
void AppendLiteralElement(const Literal& lit, int64_t i, std::string& out);

}  // namespace kiln::hlo
