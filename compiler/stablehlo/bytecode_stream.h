// Bounded reading of MLIR bytecode primitives (mlir/docs/BytecodeFormat.md):
// bytes, prefix-encoded varints, zigzag signed varints, sections (an id, a
// length, optional alignment padding of 0xCB bytes). A ByteStream reads
// inside [begin, end) of a buffer it does not own and never past it: every
// read checks what is left and fails with an Error naming the byte offset
// in the whole input. Not thread-safe; cheap to copy (a view).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::stablehlo::bytecode {

struct Section {
  uint8_t id = 0;
  size_t begin = 0;  // offsets into the whole input
  size_t end = 0;
};

class ByteStream {
 public:
  // Reads bytes [begin, end) of `input`; offsets in errors count from the
  // start of `input`.
  ByteStream(std::string_view input, size_t begin, size_t end, std::string_view what)
      : input_(input), pos_(begin), end_(end), what_(what) {}

  bool empty() const { return pos_ >= end_; }
  size_t offset() const { return pos_; }
  size_t remaining() const { return end_ - pos_; }

  Result<uint8_t> Byte();
  Result<uint64_t> VarInt();
  // (value << 1) | flag, split.
  Result<uint64_t> VarIntWithFlag(bool& flag);
  Result<int64_t> SignedVarInt();
  Result<std::string_view> Bytes(uint64_t count);
  // A NUL-terminated string (the producer in the header).
  Result<std::string_view> CString();
  // A section header and its (aligned) data; the stream moves past it.
  Result<Section> ReadSection();
  // A count of items each taking at least `min_item_bytes` more bytes;
  // fails when the rest of the stream cannot hold that many, so that no
  // allocation exceeds the input's size.
  Result<uint64_t> Count(uint64_t min_item_bytes = 1);

  Error Fail(const std::string& message) const;

 private:
  std::string_view input_;
  size_t pos_;
  size_t end_;
  std::string_view what_;
};

}  // namespace kiln::stablehlo::bytecode
