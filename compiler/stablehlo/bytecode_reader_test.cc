#include "compiler/stablehlo/bytecode_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "compiler/stablehlo/bytecode_stream.h"
#include "compiler/stablehlo/stablehlo_test_corpus.h"

namespace kiln::stablehlo {
namespace {

using testing::Files;
using testing::KeyOf;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BytecodeStreamTest, PrefixVarIntsAndZigzag) {
  // 1: one byte; 300: two bytes (0b100101100 << 2 | 0b10); 2^63: nine bytes.
  const std::string bytes = std::string("\x03", 1) + std::string("\xb2\x04", 2) +
                            std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x80", 9) + std::string("\x03", 1);
  bytecode::ByteStream s(bytes, 0, bytes.size(), "test");
  EXPECT_EQ(s.VarInt().value(), 1u);
  EXPECT_EQ(s.VarInt().value(), 300u);
  EXPECT_EQ(s.VarInt().value(), uint64_t{1} << 63);
  EXPECT_EQ(s.SignedVarInt().value(), -1);  // zigzag 1
  EXPECT_TRUE(s.empty());
  Result<uint64_t> past = s.VarInt();
  ASSERT_FALSE(past.has_value());
  EXPECT_NE(past.error().message.find("byte offset 13"), std::string::npos) << past.error().message;
}

TEST(BytecodeStreamTest, CountsAreBoundedByTheData) {
  const std::string bytes("\xff\x01", 2);  // a count of 127 with one byte left
  bytecode::ByteStream s(bytes, 0, bytes.size(), "test");
  EXPECT_FALSE(s.Count().has_value());
}

TEST(BytecodeReaderTest, EachVhloArtifactHasTheKeyOfItsSource) {
  const std::vector<std::filesystem::path> artifacts = Files("vhlo", ".mlir.bc");
  ASSERT_GE(artifacts.size(), testing::kMinVhloArtifacts);
  for (const std::filesystem::path& bc : artifacts) {
    std::filesystem::path source = bc;
    source.replace_extension();  // drop ".bc"
    Result<hlo::Hash128> from_bytecode = KeyOf(ReadFile(bc), bc.filename().string());
    Result<hlo::Hash128> from_text = KeyOf(ReadFile(source), source.filename().string());
    ASSERT_TRUE(from_bytecode) << bc << ": " << from_bytecode.error().ToString();
    ASSERT_TRUE(from_text) << source << ": " << from_text.error().ToString();
    EXPECT_EQ(*from_bytecode, *from_text) << bc;
  }
}

TEST(BytecodeReaderTest, HeadersAreChecked) {
  Result<MlirModule> no_magic = ReadBytecode("MLIR", "x.bc");
  ASSERT_FALSE(no_magic.has_value());
  EXPECT_NE(no_magic.error().message.find("x.bc"), std::string::npos) << no_magic.error().message;
  Result<MlirModule> future = ReadBytecode(std::string("ML\xef" "R\x0f", 5) + "p" + std::string(1, '\0'), "x.bc");
  ASSERT_FALSE(future.has_value());
  EXPECT_NE(future.error().message.find("bytecode version 7"), std::string::npos) << future.error().message;
}

// Every truncation and many single-byte changes of an artifact are read or
// refused, never a crash or a hang (the sanitizer build checks the reads).
TEST(BytecodeReaderTest, DamagedArtifactsFailCleanly) {
  const std::vector<std::filesystem::path> artifacts = Files("vhlo", ".mlir.bc");
  ASSERT_FALSE(artifacts.empty());
  const std::string bytes = ReadFile(artifacts.front());
  ASSERT_GT(bytes.size(), 100u);
  int refused = 0;
  for (size_t n = 0; n < bytes.size(); n += 97) {
    Result<MlirModule> m = ReadBytecode(std::string_view(bytes).substr(0, n), "cut.bc");
    refused += !m.has_value();
  }
  EXPECT_GT(refused, 0);
  for (size_t at = 5; at < bytes.size(); at += 61) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}}) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(value);
      Result<MlirModule> m = ReadBytecode(damaged, "damaged.bc");
      if (m) (void)ConvertToHlo(*m);
    }
  }
}

}  // namespace
}  // namespace kiln::stablehlo
