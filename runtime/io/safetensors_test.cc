#include "runtime/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

// A buffer with `header` as its JSON header and `data_size` zero bytes after.
std::string Buffer(const std::string& header, size_t data_size) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + std::string(data_size, '\0');
}

void ExpectRejected(const std::string& bytes, const std::string& substring) {
  auto file = ParseSafetensors(bytes);
  ASSERT_FALSE(file) << "accepted; wanted an error containing: " << substring;
  EXPECT_TRUE(file.error().message.starts_with("safetensors: ")) << file.error().message;
  EXPECT_NE(file.error().message.find(substring), std::string::npos) << file.error().message;
  // Every malformed file is the sender's: the server answers 400 for it.
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument) << file.error();
}

Literal Parse(const char* text) {
  auto lit = hlo::ParseLiteral(text);
  EXPECT_TRUE(lit) << lit.error().message;
  return *lit;
}

TEST(SafetensorsTest, RoundTripsEveryDtype) {
  const PrimitiveType types[] = {
      PrimitiveType::kPred, PrimitiveType::kU8,     PrimitiveType::kS8,       PrimitiveType::kU16,
      PrimitiveType::kS16,  PrimitiveType::kF16,    PrimitiveType::kBF16,     PrimitiveType::kU32,
      PrimitiveType::kS32,  PrimitiveType::kF32,    PrimitiveType::kU64,      PrimitiveType::kS64,
      PrimitiveType::kF64,  PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3FN, PrimitiveType::kC64};
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  for (PrimitiveType type : types) {
    Literal lit(hlo::Shape(type, {2, 3}));
    for (size_t i = 0; i < lit.data().size(); ++i) {
      lit.mutable_data()[i] =
          static_cast<uint8_t>(type == PrimitiveType::kPred ? i % 2 : i * 7 + 1);
    }
    std::string name(hlo::PrimitiveTypeName(type));
    file.tensors.push_back({name, lit});
    auto dtype = SafetensorsDtypeName(type);
    ASSERT_TRUE(dtype) << name;
    EXPECT_EQ(PrimitiveTypeFromSafetensorsDtype(*dtype), type);
  }
  file.tensors.push_back({"scalar", Parse("f32[] 2.5")});
  file.tensors.push_back({"empty", Parse("s32[0,4] {}")});

  auto bytes = SerializeSafetensors(file);
  ASSERT_TRUE(bytes) << bytes.error().message;
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes->data(), 8);
  EXPECT_EQ((8 + header_size) % 8, 0u) << "data must start 8-byte aligned";

  auto back = ParseSafetensors(*bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->metadata, file.metadata);
  ASSERT_EQ(back->tensors.size(), file.tensors.size());
  for (const NamedTensor& tensor : file.tensors) {
    const Literal* read = back->Find(tensor.name);
    ASSERT_NE(read, nullptr) << tensor.name;
    EXPECT_EQ(*read, tensor.value) << tensor.name;
  }
  EXPECT_EQ(back->Find("missing"), nullptr);
}

TEST(SafetensorsTest, ReadsTheReferenceLayout) {
  // As the Python package writes {"a": torch.tensor([1, 2], dtype=int32)}.
  std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})";
  std::string bytes = Buffer(header, 0) + std::string("\x01\0\0\0\x02\0\0\0", 8);
  auto file = ParseSafetensors(bytes);
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].value.ToString(), "s32[2] {1, 2}");
  EXPECT_EQ(file->metadata.at("k"), "v");
}

TEST(SafetensorsTest, FileRoundTrip) {
  std::string path = (std::filesystem::temp_directory_path() / "kiln_safetensors_test.st").string();
  SafetensorsFile file;
  file.tensors.push_back({"0", Parse("bf16[2] {1.5, -2}")});
  ASSERT_TRUE(WriteSafetensorsFile(path, file));
  auto back = ReadSafetensorsFile(path);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->tensors[0].value, file.tensors[0].value);
  std::filesystem::remove(path);
  auto missing = ReadSafetensorsFile(path);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(path), std::string::npos);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(SafetensorsTest, RejectsTruncatedBuffers) {
  ExpectRejected("", "truncated: 0 bytes");
  ExpectRejected(std::string("\x10\0\0", 3), "truncated: 3 bytes");
  ExpectRejected(Buffer("{}", 0).substr(0, 9), "truncated: header length 2");
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ExpectRejected(Buffer(header, 4), "run past the 4 bytes of data");
}

TEST(SafetensorsTest, RejectsHugeHeaderLength) {
  std::string bytes(16, '\0');
  bytes[7] = '\x7f';  // ~9e18
  ExpectRejected(bytes, "exceeds the limit");
  std::string all_ones(16, '\xff');
  ExpectRejected(all_ones, "exceeds the limit");
}

TEST(SafetensorsTest, RejectsBadJson) {
  ExpectRejected(Buffer("{\"a\":", 0), "not valid JSON");
  ExpectRejected(Buffer("[1, 2]", 0), "not a JSON object");
  ExpectRejected(Buffer("\"\xff\xfe\"", 0), "not valid JSON");
  ExpectRejected(Buffer(R"({"a":1,"a":2})", 0), "names \"a\" twice");
}

TEST(SafetensorsTest, RejectsBadTensorDescriptions) {
  ExpectRejected(Buffer(R"({"a":[]})", 0), "tensor \"a\": description is not an object");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":1}})", 4),
                 "unknown field \"x\"");
  ExpectRejected(Buffer(R"({"a":{"shape":[],"data_offsets":[0,4]}})", 4), "dtype missing");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F128","shape":[],"data_offsets":[0,4]}})", 4),
                 "unsupported dtype \"F128\"");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
                 "not a non-negative integer");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
                 "not a non-negative integer");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4),
                 "data_offsets missing");
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4),
                 "end before they begin");
  ExpectRejected(Buffer(R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4),
                 "empty name");
  ExpectRejected(Buffer(R"({"__metadata__":{"k":1}})", 0), "__metadata__ value of \"k\"");
  ExpectRejected(Buffer(R"({"a":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", 0) + "\x02",
                 "byte value 2");
}

TEST(SafetensorsTest, RejectsOffsetsOutOfRange) {
  ExpectRejected(
      Buffer(
          R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[18446744073709551612,18446744073709551615]}})",
          4),
      "run past");
  ExpectRejected(Buffer(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})", 4), "run past");
}

TEST(SafetensorsTest, RejectsWrongSizes) {
  ExpectRejected(Buffer(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
                 "hold 4 bytes but F32 [2] needs 8 bytes");
  ExpectRejected(
      Buffer(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8),
      "overflowing size");
}

TEST(SafetensorsTest, RejectsOverlapsAndGaps) {
  ExpectRejected(Buffer(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                        R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                        6),
                 "overlaps");
  ExpectRejected(Buffer(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4),
                 "2 bytes at [0, 2) before tensor \"a\" belong to no tensor");
  ExpectRejected(Buffer(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 4),
                 "2 bytes at the end of the data belong to no tensor");
}

TEST(SafetensorsTest, WriterRejectsWhatItCannotEncode) {
  auto write = [](std::vector<NamedTensor> tensors) {
    SafetensorsFile file;
    file.tensors = std::move(tensors);
    return SerializeSafetensors(file);
  };
  Literal f32 = Parse("f32[1] {1}");
  auto dup = write({{"a", f32}, {"a", f32}});
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("given twice"), std::string::npos);
  auto tuple = write({{"t", Parse("(f32[] 1, s32[] 2)")}});
  ASSERT_FALSE(tuple);
  EXPECT_NE(tuple.error().message.find("not an array"), std::string::npos);
  auto s4 = write({{"s", Literal(hlo::Shape(PrimitiveType::kS4, {2}))}});
  ASSERT_FALSE(s4);
  EXPECT_NE(s4.error().message.find("s4 has no safetensors dtype"), std::string::npos);
  auto empty = write({{"", f32}});
  ASSERT_FALSE(empty);
  auto bad_utf8 = write({{"\xff", f32}});
  ASSERT_FALSE(bad_utf8);
  EXPECT_NE(bad_utf8.error().message.find("UTF-8"), std::string::npos);
}

// The file's u64 header length.
uint64_t HeaderLength(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  return n;
}

// Every prefix and every single-byte corruption of a valid file is either
// refused with a coded error or parses to tensors that are consistent with
// the buffer: each tensor's bytes match its shape and dtype, and together
// they tile the data area exactly (so a flipped offset, length or shape
// that slipped past a check would show here).
TEST(SafetensorsTest, CorruptedBuffersNeverCrash) {
  SafetensorsFile file;
  file.tensors.push_back({"w", Parse("f32[2,2] {{1, 2}, {3, 4}}")});
  file.tensors.push_back({"b", Parse("s8[3] {1, 2, 3}")});
  std::string bytes = *SerializeSafetensors(file);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ParseSafetensors(bytes.substr(0, n))) << "prefix of " << n << " bytes parsed";
  }
  int accepted = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int flip : {0x01, 0x20, 0x80}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ flip);
      std::string where = "byte " + std::to_string(i) + " ^ " + std::to_string(flip);
      auto parsed = ParseSafetensors(corrupt);
      if (!parsed) {
        EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << where << ": " << parsed.error();
        EXPECT_TRUE(parsed.error().message.starts_with("safetensors: ")) << where << ": " << parsed.error();
        ++refused;
        continue;
      }
      ++accepted;
      const uint64_t header = HeaderLength(corrupt);
      ASSERT_LE(header, corrupt.size() - 8) << where;
      uint64_t data_bytes = 0;
      for (const NamedTensor& t : parsed->tensors) {
        EXPECT_FALSE(t.name.empty()) << where;
        ASSERT_TRUE(t.value.shape().IsArray()) << where;
        EXPECT_EQ(t.value.data().size(), static_cast<size_t>(t.value.shape().ByteSize())) << where;
        EXPECT_EQ(t.value.element_count(), t.value.shape().ElementCount()) << where;
        data_bytes += t.value.data().size();
      }
      EXPECT_EQ(data_bytes, corrupt.size() - 8 - header) << where << ": tensors do not tile the data";
      // Whatever was accepted writes back and reads back the same.
      auto again = SerializeSafetensors(*parsed);
      ASSERT_TRUE(again) << where << ": " << again.error();
      auto reparsed = ParseSafetensors(*again);
      ASSERT_TRUE(reparsed) << where << ": " << reparsed.error();
      ASSERT_EQ(reparsed->tensors.size(), parsed->tensors.size()) << where;
      for (size_t k = 0; k < parsed->tensors.size(); ++k) {
        EXPECT_EQ(reparsed->tensors[k].name, parsed->tensors[k].name) << where;
        EXPECT_EQ(reparsed->tensors[k].value, parsed->tensors[k].value) << where;
      }
    }
  }
  // Flips in the tensor bytes (and the header's padding) are accepted; flips
  // in the length, names, dtypes, shapes and offsets are refused.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace kiln::runtime::io
