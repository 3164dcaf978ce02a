#include "compiler/hlo/shape.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace kiln::hlo {
namespace {

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

}  // namespace

ShapeExtent MeasureShape(const Shape& shape) {
  ShapeExtent extent;
  std::vector<std::pair<const Shape*, int64_t>> work = {{&shape, 1}};
  while (!work.empty()) {
    auto [s, level] = work.back();
    work.pop_back();
    ++extent.nodes;
    extent.levels = std::max(extent.levels, level);
    for (const Shape& element : s->tuple_shapes()) work.emplace_back(&element, level + 1);
  }
  return extent;
}

bool Layout::IsPlain() const {
  return tiles.empty() && tail_padding_alignment == 1 && element_size_bits == 0 &&
         memory_space == 0 && other.empty();
}

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims) : type_(type) {
  set_dimensions(std::move(dims));
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type_ = PrimitiveType::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

Shape Shape::Buffer(Shape element) {
  Shape s;
  s.type_ = PrimitiveType::kBuffer;
  s.tuple_.push_back(std::move(element));
  return s;
}

void Shape::set_dimensions(std::vector<int64_t> dims) {
  dims_ = std::move(dims);
  dynamic_mask_ = 0;
  layout_ = Layout{};
  if (IsArray()) layout_.minor_to_major = DefaultMinorToMajor(rank());
}

void Shape::set_dynamic_dimension(int64_t i, bool dynamic) {
  if (dynamic) {
    dynamic_mask_ |= uint64_t{1} << i;
  } else {
    dynamic_mask_ &= ~(uint64_t{1} << i);
  }
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  return dynamic_mask_ == 0;
}

std::vector<int64_t> Shape::DefaultMinorToMajor(int64_t rank) {
  std::vector<int64_t> m(rank);
  for (int64_t i = 0; i < rank; ++i) m[i] = rank - 1 - i;
  return m;
}

bool Shape::has_default_layout() const {
  if (!IsArray()) return true;
  if (!layout_.IsPlain()) return false;
  const auto& m = layout_.minor_to_major;
  if (static_cast<int64_t>(m.size()) != rank()) return false;
  for (int64_t i = 0; i < rank(); ++i) {
    if (m[i] != rank() - 1 - i) return false;
  }
  return true;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return -1;
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

int64_t Shape::ByteSize() const {
  int64_t n = ElementCount();
  if (n < 0) return -1;
  int64_t bytes;
  if (__builtin_mul_overflow(n, int64_t{HostByteWidth(type_)}, &bytes)) return -1;
  return bytes;
}

bool Shape::SameDimensions(const Shape& other) const {
  return type_ == other.type_ && dims_ == other.dims_ &&
         dynamic_mask_ == other.dynamic_mask_;
}

bool Shape::Compatible(const Shape& other) const {
  if (type_ != other.type_) return false;
  if (IsTuple() || IsBuffer()) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_ && dynamic_mask_ == other.dynamic_mask_;
}

std::string Shape::ToString(bool print_default_layout) const {
  std::string out;
  AppendTo(out, print_default_layout);
  return out;
}

void Shape::AppendTo(std::string& out, bool print_default_layout) const {
  if (IsBuffer()) {
    out += "b(";
    if (!tuple_.empty()) tuple_[0].AppendTo(out, print_default_layout);
    out += ')';
    return;
  }
  if (IsTuple()) {
    out += '(';
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out += ", ";
      tuple_[i].AppendTo(out, print_default_layout);
    }
    out += ')';
    return;
  }
  out += PrimitiveTypeName(type_);
  out += '[';
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ',';
    if (dims_[i] == kUnboundedDim) {
      out += '?';
      continue;
    }
    if (is_dynamic_dimension(i)) out += "<=";
    AppendInt(out, dims_[i]);
  }
  out += ']';
  if (!IsArray() || (!print_default_layout && has_default_layout())) return;
  // A scalar's default layout is empty: XLA never prints it as "{}".
  if (rank() == 0 && layout_.IsPlain()) return;
  out += '{';
  for (size_t i = 0; i < layout_.minor_to_major.size(); ++i) {
    if (i > 0) out += ',';
    AppendInt(out, layout_.minor_to_major[i]);
  }
  if (!layout_.IsPlain()) {
    out += ':';
    if (!layout_.tiles.empty()) out += 'T';
    for (const auto& tile : layout_.tiles) {
      out += '(';
      for (size_t i = 0; i < tile.size(); ++i) {
        if (i > 0) out += ',';
        if (tile[i] == kCombineTileDim) {
          out += '*';
        } else {
          AppendInt(out, tile[i]);
        }
      }
      out += ')';
    }
    if (layout_.tail_padding_alignment != 1) {
      out += "L(";
      AppendInt(out, layout_.tail_padding_alignment);
      out += ')';
    }
    if (layout_.element_size_bits != 0) {
      out += "E(";
      AppendInt(out, layout_.element_size_bits);
      out += ')';
    }
    if (layout_.memory_space != 0) {
      out += "S(";
      AppendInt(out, layout_.memory_space);
      out += ')';
    }
    out += layout_.other;
  }
  out += '}';
}

}  // namespace kiln::hlo
