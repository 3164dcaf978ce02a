#include "compiler/stablehlo/bytecode_stream.h"

#include <bit>
#include <cstring>

namespace kiln::stablehlo::bytecode {

Error ByteStream::Fail(const std::string& message) const {
  return InvalidArgumentError("MLIR bytecode: " + std::string(what_) + ": " + message + " at byte offset " +
                              std::to_string(pos_))
      .WithReason("stablehlo_bytecode_error");
}

Result<uint8_t> ByteStream::Byte() {
  if (pos_ >= end_) return Fail("unexpected end of data");
  return static_cast<uint8_t>(input_[pos_++]);
}

Result<uint64_t> ByteStream::VarInt() {
  KILN_ASSIGN_OR_RETURN(uint8_t first, Byte());
  if (first & 1) return first >> 1;
  // The trailing zero bits of the first byte count the bytes that follow.
  const int extra = first == 0 ? 8 : std::countr_zero(first);
  if (remaining() < static_cast<size_t>(extra)) return Fail("varint runs past the end");
  uint64_t value = 0;
  std::memcpy(&value, input_.data() + pos_, static_cast<size_t>(extra));  // little-endian hosts
  pos_ += static_cast<size_t>(extra);
  if (first == 0) return value;
  // The first byte's bits above the length prefix are the lowest value bits.
  value = (value << (8 - extra - 1)) | (static_cast<uint64_t>(first) >> (extra + 1));
  return value;
}

Result<uint64_t> ByteStream::VarIntWithFlag(bool& flag) {
  KILN_ASSIGN_OR_RETURN(uint64_t v, VarInt());
  flag = (v & 1) != 0;
  return v >> 1;
}

Result<int64_t> ByteStream::SignedVarInt() {
  KILN_ASSIGN_OR_RETURN(uint64_t v, VarInt());
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

Result<std::string_view> ByteStream::Bytes(uint64_t count) {
  if (count > remaining()) return Fail("needs " + std::to_string(count) + " bytes, " + std::to_string(remaining()) + " left");
  std::string_view out = input_.substr(pos_, static_cast<size_t>(count));
  pos_ += static_cast<size_t>(count);
  return out;
}

Result<std::string_view> ByteStream::CString() {
  const size_t nul = input_.substr(0, end_).find('\0', pos_);
  if (nul == std::string_view::npos) return Fail("unterminated string");
  std::string_view out = input_.substr(pos_, nul - pos_);
  pos_ = nul + 1;
  return out;
}

Result<Section> ByteStream::ReadSection() {
  KILN_ASSIGN_OR_RETURN(uint8_t id_and_aligned, Byte());
  KILN_ASSIGN_OR_RETURN(uint64_t length, VarInt());
  Section section;
  section.id = id_and_aligned & 0x7f;
  if (id_and_aligned & 0x80) {
    KILN_ASSIGN_OR_RETURN(uint64_t alignment, VarInt());
    if (alignment == 0 || alignment > 256 || (alignment & (alignment - 1)) != 0) {
      return Fail("section alignment " + std::to_string(alignment) + " is not a small power of two");
    }
    while (pos_ % alignment != 0) {
      KILN_ASSIGN_OR_RETURN(uint8_t pad, Byte());
      if (pad != 0xCB) return Fail("bad section padding");
    }
  }
  if (length > remaining()) return Fail("section of " + std::to_string(length) + " bytes runs past the end");
  section.begin = pos_;
  section.end = pos_ + static_cast<size_t>(length);
  pos_ = section.end;
  return section;
}

Result<uint64_t> ByteStream::Count(uint64_t min_item_bytes) {
  KILN_ASSIGN_OR_RETURN(uint64_t n, VarInt());
  if (min_item_bytes > 0 && n > remaining() / min_item_bytes) {
    return Fail("count " + std::to_string(n) + " exceeds what the data can hold");
  }
  return n;
}

}  // namespace kiln::stablehlo::bytecode
