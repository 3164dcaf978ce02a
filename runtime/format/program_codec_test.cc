#include <gtest/gtest.h>

#include "fuzz/regression_inputs.h"
#include "runtime/format/executable_envelope.h"
#include "runtime/format/program.h"

namespace kiln::runtime {
namespace {

// x + y as one kernel, written by hand the way lowering would.
Program AddProgram() {
  Program p;
  p.key = "00112233445566778899aabbccddeeff";
  p.chip = "v5e";
  p.plan = "heuristic";
  p.options = "{}";
  p.buffers = {
      {BufferKind::kParameter, "f32[4]", 16, 0, 0, {}, ""},
      {BufferKind::kParameter, "f32[4]", 16, 16, 1, {}, ""},
      {BufferKind::kOutput, "f32[4]", 16, 32, -1, {}, ""},
  };
  ProgramKernel k;
  k.name = "add.1";
  k.kind = "loop";
  k.hlo =
      "HloModule k\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
      "  ROOT s = f32[4] add(a, b)\n}\n";
  k.inputs = {0, 1};
  k.outputs = {2};
  k.tiling = {{{4}, {4}}, {{4}}, {1}, 4096};
  k.fused_instructions = 1;
  k.flops = 4;
  k.bytes_accessed = 48;
  k.estimated_seconds = 2e-6;
  p.kernels = {k};
  p.parameters = {0, 1};
  p.result_shape = "f32[4]";
  p.results = {2};
  p.peak_hbm_bytes = 48;
  p.estimated_seconds = 2e-6;
  p.compile_ms = 0.5;
  return p;
}

TEST(ProgramCodecTest, RoundTripsExactly) {
  Program p = AddProgram();
  std::vector<uint8_t> bytes = *SerializeProgram(p);
  auto back = ParseProgram(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, p);
  EXPECT_EQ(*SerializeProgram(*back), bytes);
}

TEST(ProgramCodecTest, RoundTripsTheSliceAProgramRunsOn) {
  Program p = AddProgram();
  p.topology = "2x4";
  p.replica_count = 2;
  auto back = ParseProgram(*SerializeProgram(p));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->topology, "2x4");
  EXPECT_EQ(back->replica_count, 2u);
  EXPECT_EQ(ProgramChipCount(*back).value_or(-1), 8);
  // A one-chip program stores neither field and reads back as one chip.
  auto one = ParseProgram(*SerializeProgram(AddProgram()));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->topology, "");
  EXPECT_EQ(one->replica_count, 1u);
  EXPECT_EQ(ProgramChipCount(*one).value_or(-1), 1);
}

TEST(ProgramCodecTest, RejectsEveryTruncation) {
  std::vector<uint8_t> bytes = *SerializeProgram(AddProgram());
  for (size_t n = 0; n < bytes.size(); n += 7) {
    auto r = ParseProgram(std::span<const uint8_t>(bytes.data(), n));
    ASSERT_FALSE(r) << "accepted " << n << " of " << bytes.size() << " bytes";
    EXPECT_NE(r.error().message.find("executable"), std::string::npos) << r.error().message;
  }
}

TEST(ProgramCodecTest, RejectsEveryFlippedByte) {
  std::vector<uint8_t> bytes = *SerializeProgram(AddProgram());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0x5a;
    EXPECT_FALSE(ParseProgram(bad)) << "flipping byte " << i << " went unnoticed";
  }
}

// The envelope's checksum stops every flip above before the payload is read.
// Here each flipped payload is re-sealed (a fresh checksum), so the
// FlatBuffers verifier and VerifyProgram see the damage: every mutation is
// either refused as data_loss or decodes to a program that passes
// VerifyProgram. Never a crash (CI runs this under ASan and UBSan).
TEST(ProgramCodecTest, ResealedFlippedPayloadsAreRefusedOrVerified) {
  std::vector<uint8_t> bytes = *SerializeProgram(AddProgram());
  const std::span<const uint8_t> payload(bytes.data() + kEnvelopeHeaderBytes, bytes.size() - kEnvelopeHeaderBytes);
  int refused_by_layout = 0, refused_by_structure = 0, decoded = 0;
  for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x5a}, uint8_t{0xff}}) {
    for (size_t i = 0; i < payload.size(); ++i) {
      std::vector<uint8_t> bad(payload.begin(), payload.end());
      bad[i] ^= mask;
      auto r = ParseProgram(WrapInEnvelope(kExecutableFormatVersion, bad));
      if (r) {
        EXPECT_TRUE(VerifyProgram(*r)) << "payload byte " << i << " ^ " << int{mask};
        ++decoded;
        continue;
      }
      EXPECT_EQ(r.error().code, ErrorCode::kDataLoss)
          << "payload byte " << i << " ^ " << int{mask} << ": " << r.error().ToString();
      EXPECT_FALSE(r.error().message.empty());
      if (r.error().message.find("FlatBuffers verification") != std::string::npos) {
        ++refused_by_layout;
      } else {
        ++refused_by_structure;
      }
    }
  }
  // The flips reached both checkers, and some only changed a value
  // (a string's byte, a cost figure).
  EXPECT_GT(refused_by_layout, 0);
  EXPECT_GT(refused_by_structure, 0);
  EXPECT_GT(decoded, 0);
}

// Found by fuzz/executable_fuzzer: the file identifier was read before the
// verifier had checked the payload was long enough to hold one (a heap
// overflow under AddressSanitizer).
TEST(ProgramCodecTest, RejectsPayloadsTooShortForAFlatBuffer) {
  for (size_t n = 0; n < 8; ++n) {
    std::vector<uint8_t> payload(n, 0);
    std::vector<uint8_t> bytes = WrapInEnvelope(kExecutableFormatVersion, payload);
    auto r = ParseProgram(bytes);
    ASSERT_FALSE(r) << n << " payload bytes";
    EXPECT_NE(r.error().message.find("FlatBuffers verification"), std::string::npos) << r.error().message;
  }
}

// Found by fuzz/executable_fuzzer: FlatBuffers 2.0's verifier accepts a
// vector of 8-byte elements (here a buffer's parameter path) 4 bytes off its
// alignment, and the decoder read the elements in place (UBSan: misaligned
// load). The input is the harness's: a mode byte, then the payload.
TEST(ProgramCodecTest, ReadsEightByteVectorsAHostileBufferMisaligns) {
  std::string input = fuzz::RegressionInput("executable", "misaligned_int64_vector");
  ASSERT_GT(input.size(), 1u);
  ASSERT_EQ(input[0] & 1, 0) << "a payload-mode input";
  std::vector<uint8_t> bytes = WrapInEnvelope(
      kExecutableFormatVersion, std::span(reinterpret_cast<const uint8_t*>(input.data()) + 1, input.size() - 1));
  auto r = ParseProgram(bytes);  // decodes, then VerifyProgram refuses the buffer table
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a parameter buffer"), std::string::npos) << r.error().message;
}

TEST(ProgramCodecTest, RejectsAnotherFormatVersion) {
  Program p = AddProgram();
  p.format_version = kExecutableFormatVersion + 1;
  auto r = ParseProgram(*SerializeProgram(p));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("format version"), std::string::npos) << r.error().message;
}

TEST(ProgramVerifyTest, RejectsReadBeforeWrite) {
  Program p = AddProgram();
  p.kernels[0].inputs = {0, 2};
  auto s = VerifyProgram(p);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("before any kernel writes it"), std::string::npos);
}

TEST(ProgramVerifyTest, RejectsOutOfRangeAndDoubleWrites) {
  Program p = AddProgram();
  p.kernels[0].outputs = {7};
  EXPECT_FALSE(VerifyProgram(p));
  p = AddProgram();
  p.kernels.push_back(p.kernels[0]);
  auto s = VerifyProgram(p);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("already holds a value"), std::string::npos);
  p = AddProgram();
  p.parameters = {0};
  EXPECT_FALSE(VerifyProgram(p));
}

TEST(ProgramVerifyTest, RejectsMalformedSlices) {
  for (const char* bad : {"2x", "x4", "2xx4", "0x4", "2*4", "2x-4", "999999x2", "128x128x128"}) {
    Program p = AddProgram();
    p.topology = bad;
    auto s = VerifyProgram(p);
    EXPECT_FALSE(s) << bad;
  }
  Program p = AddProgram();
  p.topology = "2x4";
  p.replica_count = 3;
  auto s = VerifyProgram(p);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("does not split into 3 replicas"), std::string::npos);
  p.replica_count = 0;
  EXPECT_FALSE(VerifyProgram(p));
}

}  // namespace
}  // namespace kiln::runtime
