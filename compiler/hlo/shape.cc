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

Shape::Rep& Shape::Mutable() {
  if (rep_ == nullptr) {
    rep_ = new Rep();
  } else if (rep_->refs.load(std::memory_order_acquire) != 1) {
    Rep* own = new Rep(*rep_);
    Unref(rep_);
    rep_ = own;
  }
  return *rep_;
}

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims) {
  Mutable().type = type;
  set_dimensions(std::move(dims));
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  Rep& r = s.Mutable();
  r.type = PrimitiveType::kTuple;
  r.tuple = std::move(elements);
  return s;
}

Shape Shape::Buffer(Shape element) {
  Shape s;
  Rep& r = s.Mutable();
  r.type = PrimitiveType::kBuffer;
  r.tuple.push_back(std::move(element));
  return s;
}

Layout& Shape::mutable_layout() { return Mutable().layout; }

std::vector<Shape>& Shape::mutable_tuple_shapes() { return Mutable().tuple; }

void Shape::set_element_type(PrimitiveType t) {
  if (element_type() == t) return;
  Mutable().type = t;
}

void Shape::set_dimensions(std::vector<int64_t> dims) {
  Rep& r = Mutable();
  r.dims = std::move(dims);
  r.dynamic_mask = 0;
  r.layout = Layout{};
  if (IsArrayType(r.type)) r.layout.minor_to_major = DefaultMinorToMajor(rank());
}

void Shape::set_dynamic_dimension(int64_t i, bool dynamic) {
  Rep& r = Mutable();
  if (dynamic) {
    r.dynamic_mask |= uint64_t{1} << i;
  } else {
    r.dynamic_mask &= ~(uint64_t{1} << i);
  }
}

bool Shape::operator==(const Shape& other) const {
  if (rep_ == other.rep_) return true;
  const Rep& a = rep_ != nullptr ? *rep_ : EmptyRep();
  const Rep& b = other.rep_ != nullptr ? *other.rep_ : EmptyRep();
  return a.type == b.type && a.dims == b.dims && a.dynamic_mask == b.dynamic_mask &&
         a.layout == b.layout && a.tuple == b.tuple;
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes()) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  return dynamic_mask() == 0;
}

std::vector<int64_t> Shape::DefaultMinorToMajor(int64_t rank) {
  std::vector<int64_t> m(rank);
  for (int64_t i = 0; i < rank; ++i) m[i] = rank - 1 - i;
  return m;
}

bool Shape::has_default_layout() const {
  if (!IsArray()) return true;
  if (!layout().IsPlain()) return false;
  const auto& m = layout().minor_to_major;
  if (static_cast<int64_t>(m.size()) != rank()) return false;
  for (int64_t i = 0; i < rank(); ++i) {
    if (m[i] != rank() - 1 - i) return false;
  }
  return true;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dimensions()) {
    if (d < 0) return -1;
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

int64_t Shape::ByteSize() const {
  int64_t n = ElementCount();
  if (n < 0) return -1;
  int64_t bytes;
  if (__builtin_mul_overflow(n, int64_t{HostByteWidth(element_type())}, &bytes)) return -1;
  return bytes;
}

bool Shape::SameDimensions(const Shape& other) const {
  if (rep_ == other.rep_) return true;
  return element_type() == other.element_type() && dimensions() == other.dimensions() &&
         dynamic_mask() == other.dynamic_mask();
}

bool Shape::Compatible(const Shape& other) const {
  if (rep_ == other.rep_) return true;
  if (element_type() != other.element_type()) return false;
  const std::vector<Shape>& tuple = tuple_shapes();
  if (IsTuple() || IsBuffer()) {
    if (tuple.size() != other.tuple_shapes().size()) return false;
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (!tuple[i].Compatible(other.tuple_shapes(i))) return false;
    }
    return true;
  }
  return dimensions() == other.dimensions() && dynamic_mask() == other.dynamic_mask();
}

std::string Shape::ToString(bool print_default_layout) const {
  std::string out;
  AppendTo(out, print_default_layout);
  return out;
}

void Shape::AppendTo(std::string& out, bool print_default_layout) const {
  if (IsBuffer()) {
    out += "b(";
    if (!tuple_shapes().empty()) tuple_shapes(0).AppendTo(out, print_default_layout);
    out += ')';
    return;
  }
  if (IsTuple()) {
    out += '(';
    for (size_t i = 0; i < tuple_shapes().size(); ++i) {
      if (i > 0) out += ", ";
      tuple_shapes(i).AppendTo(out, print_default_layout);
    }
    out += ')';
    return;
  }
  out += PrimitiveTypeName(element_type());
  out += '[';
  const std::vector<int64_t>& dims = dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ',';
    if (dims[i] == kUnboundedDim) {
      out += '?';
      continue;
    }
    if (is_dynamic_dimension(i)) out += "<=";
    AppendInt(out, dims[i]);
  }
  out += ']';
  if (!IsArray() || (!print_default_layout && has_default_layout())) return;
  // A scalar's default layout is empty: XLA never prints it as "{}".
  const Layout& l = layout();
  if (rank() == 0 && l.IsPlain()) return;
  out += '{';
  for (size_t i = 0; i < l.minor_to_major.size(); ++i) {
    if (i > 0) out += ',';
    AppendInt(out, l.minor_to_major[i]);
  }
  if (!l.IsPlain()) {
    out += ':';
    if (!l.tiles.empty()) out += 'T';
    for (const auto& tile : l.tiles) {
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
    if (l.tail_padding_alignment != 1) {
      out += "L(";
      AppendInt(out, l.tail_padding_alignment);
      out += ')';
    }
    if (l.element_size_bits != 0) {
      out += "E(";
      AppendInt(out, l.element_size_bits);
      out += ')';
    }
    if (l.memory_space != 0) {
      out += "S(";
      AppendInt(out, l.memory_space);
      out += ')';
    }
    out += l.other;
  }
  out += '}';
}

}  // namespace kiln::hlo
