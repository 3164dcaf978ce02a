// The byte stream the fingerprint hashes, and XXH3-128 over it.
//
// Every hash in fingerprint.cc is XXH3-128 over a length-delimited byte
// stream: one-byte tags, integers as 8 bytes little-endian, strings and lists
// preceded by their length. The stream is a contract: cache entries are
// keyed by its hash, so changing the bytes a value produces changes keys.
// HashWriter is the one place that produces it.
//
// Written for speed, because every cache lookup fingerprints a whole module:
// the buffer is reused and grows geometrically, each value reserves its whole
// encoding once and then writes through a local cursor, and integer lists
// are copied as one block.
//
// Internal to the fingerprint. A HashWriter is not thread-safe; use one per
// thread.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/shape.h"

namespace kiln::hlo::fingerprint_internal {

// Integers are stored with memcpy, and lists of them as one block, which
// writes the bytes in little-endian order only on a little-endian host.
static_assert(std::endian::native == std::endian::little,
              "the fingerprint encoding assumes a little-endian host");

// Writes into a span the caller reserved; returns the end of what it wrote.
inline char* PutU64(char* out, uint64_t v) {
  std::memcpy(out, &v, sizeof(v));
  return out + sizeof(v);
}

// A list of integers: its length, then each one.
inline char* PutInts(char* out, const std::vector<int64_t>& v) {
  out = PutU64(out, v.size());
  if (v.empty()) return out;
  std::memcpy(out, v.data(), v.size() * sizeof(int64_t));
  return out + v.size() * sizeof(int64_t);
}

class HashWriter {
 public:
  // Starts a new stream, keeping the buffer.
  void Clear() { size_ = 0; }

  void Tag(char c) { *Extend(1) = c; }
  void U64(uint64_t v) { PutU64(Extend(sizeof(v)), v); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  // The length, then the bytes.
  void Bytes(std::string_view s) {
    char* out = PutU64(Extend(sizeof(uint64_t) + s.size()), s.size());
    if (!s.empty()) std::memcpy(out, s.data(), s.size());
  }
  // Like Bytes, of the text with whitespace outside "..." strings removed,
  // so that JSON and dictionary values hash the same however they were
  // spaced.
  void BytesWithoutSpace(std::string_view raw);
  void Hash(const Hash128& h) { PutU64(PutU64(Extend(2 * sizeof(uint64_t)), h.high), h.low); }

  // 'S', element type, then elements (tuple, buffer) or dimensions, dynamic
  // mask and, for arrays, every layout field.
  void Shape(const hlo::Shape& s);
  // 'L', shape, elided flag, tuple elements, then the raw data bytes.
  void Literal(const hlo::Literal& lit);

  Hash128 Finish() const;

 private:
  // Room for `n` more bytes at the end of the stream, valid until the next
  // call that writes.
  char* Extend(size_t n) {
    if (capacity_ - size_ < n) [[unlikely]] Grow(n);
    char* out = buf_.get() + size_;
    size_ += n;
    return out;
  }
  void Grow(size_t n);

  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace kiln::hlo::fingerprint_internal
