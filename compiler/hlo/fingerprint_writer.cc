#include "compiler/hlo/fingerprint_writer.h"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln::hlo::fingerprint_internal {

void HashWriter::Grow(size_t n) {
  const size_t capacity = std::max({capacity_ * 2, size_ + n, size_t{4096}});
  auto buf = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(buf.get(), buf_.get(), size_);
  buf_ = std::move(buf);
  capacity_ = capacity;
}

void HashWriter::BytesWithoutSpace(std::string_view raw) {
  // Reserves for the text as is, writes the stripped text after a length
  // placeholder, then patches the length and gives back what whitespace
  // saved; no temporary string.
  char* const length_at = Extend(sizeof(uint64_t) + raw.size());
  char* const begin = length_at + sizeof(uint64_t);
  char* out = begin;
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (in_string) {
      *out++ = c;
      if (c == '\\' && i + 1 < raw.size()) {
        *out++ = raw[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      *out++ = c;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      *out++ = c;
    }
  }
  const size_t length = static_cast<size_t>(out - begin);
  PutU64(length_at, length);
  size_ -= raw.size() - length;
}

void HashWriter::Shape(const hlo::Shape& s) {
  const uint64_t type = static_cast<uint64_t>(s.element_type());
  if (s.IsTuple() || s.IsBuffer()) {
    char* out = Extend(1 + 2 * sizeof(uint64_t));
    *out++ = 'S';
    PutU64(PutU64(out, type), s.tuple_shapes().size());
    for (const hlo::Shape& e : s.tuple_shapes()) Shape(e);
    return;
  }
  const std::vector<int64_t>& dims = s.dimensions();
  if (!s.IsArray()) {  // token, opaque: no layout
    char* out = Extend(1 + (3 + dims.size()) * sizeof(uint64_t));
    *out++ = 'S';
    PutU64(PutInts(PutU64(out, type), dims), s.dynamic_mask());
    return;
  }
  const Layout& l = s.layout();
  // Type, dimension count, dynamic mask, minor_to_major count, tile count,
  // three integer fields and the length of `other`: nine words, plus the
  // lists.
  size_t words = 9 + dims.size() + l.minor_to_major.size();
  for (const std::vector<int64_t>& tile : l.tiles) words += 1 + tile.size();
  char* out = Extend(1 + words * sizeof(uint64_t) + l.other.size());
  *out++ = 'S';
  out = PutU64(out, type);
  out = PutInts(out, dims);
  out = PutU64(out, s.dynamic_mask());
  out = PutInts(out, l.minor_to_major);
  out = PutU64(out, l.tiles.size());
  for (const std::vector<int64_t>& tile : l.tiles) out = PutInts(out, tile);
  out = PutU64(out, static_cast<uint64_t>(l.tail_padding_alignment));
  out = PutU64(out, static_cast<uint64_t>(l.element_size_bits));
  out = PutU64(out, static_cast<uint64_t>(l.memory_space));
  out = PutU64(out, l.other.size());
  if (!l.other.empty()) std::memcpy(out, l.other.data(), l.other.size());
}

void HashWriter::Literal(const hlo::Literal& lit) {
  Tag('L');
  Shape(lit.shape());
  U64(lit.elided());
  U64(lit.tuple_elements().size());
  for (const hlo::Literal& e : lit.tuple_elements()) Literal(e);
  Bytes(std::string_view(reinterpret_cast<const char*>(lit.data().data()), lit.data().size()));
}

Hash128 HashWriter::Finish() const {
  const XXH128_hash_t h = XXH3_128bits(buf_.get(), size_);
  return {h.high64, h.low64};
}

}  // namespace kiln::hlo::fingerprint_internal
