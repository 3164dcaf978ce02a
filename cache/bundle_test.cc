// The bundle codec: round trip, and every kind of damage refused with the
// item at fault named.
#include "cache/bundle.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <climits>
#include <cmath>
#include <cstring>

#include "cache/testing/test_program.h"
#include "cache/testing/test_store.h"
#include "runtime/format/executable_envelope.h"

namespace kiln::cache {
namespace {

using testing::TestExecutable;
using testing::TestId;
using testing::TestProgramBytes;

constexpr uint32_t kSchema = 6;
constexpr int64_t kSomeDay = 1'764'547'200'000;  // 2025-12-01, Unix ms

Status AcceptAll(const EntryId&, std::string_view) { return Ok(); }

Bundle TwoEntriesOneRecord() {
  Bundle bundle;
  bundle.schema_version = kSchema;
  for (uint64_t n : {1, 2}) {
    BundleEntry entry;
    entry.metadata.id = TestId(n);
    entry.metadata.options = "opt_level=2";
    entry.metadata.plan_kind = PlanKind::kTuned;
    entry.metadata.compile_seconds = 1.5 * n;
    entry.metadata.device_seconds = 0.001;
    entry.metadata.created_ms = kSomeDay + 1000 * n;
    entry.components = {{"entry body", Hash128{n, 9}}, {"parameter 0", Hash128{3, n}}};
    entry.request_hashes = {Hash128{n, 77}};
    entry.executable = TestExecutable(n, 5000);
    if (n == 2) {
      entry.metadata.tune_seconds = 12.5;
      entry.source_text = "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(2)\n}\n";
    }
    bundle.entries.push_back(std::move(entry));
  }
  TuningRecord record;
  record.tenant = "alice";
  record.workload_key = Hash128{5, 6}.Hex();
  record.chip = "v5e";
  record.plan = "tile=128";
  record.measured_seconds = 0.25;
  record.created_ms = kSomeDay + 42;
  bundle.records.push_back(record);
  record.measured_seconds.reset();
  record.error = "did not fit";
  bundle.records.push_back(record);
  return bundle;
}

std::string Encoded(const Bundle& bundle) {
  auto bytes = EncodeBundle(bundle);
  EXPECT_TRUE(bytes) << bytes.error().ToString();
  return bytes ? *bytes : std::string();
}

std::string Refusal(std::string_view bytes, const ExecutableVerifier& verify = AcceptAll) {
  auto decoded = DecodeBundle(bytes, kSchema, verify);
  EXPECT_FALSE(decoded) << "a damaged bundle was accepted";
  return decoded ? std::string() : decoded.error().ToString();
}

TEST(BundleTest, RoundTripKeepsEverything) {
  const Bundle bundle = TwoEntriesOneRecord();
  auto decoded = DecodeBundle(Encoded(bundle), kSchema, AcceptAll);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  ASSERT_EQ(decoded->entries.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const BundleEntry& in = bundle.entries[i];
    const BundleEntry& out = decoded->entries[i];
    EXPECT_EQ(out.metadata.id, in.metadata.id);
    EXPECT_EQ(out.metadata.options, in.metadata.options);
    EXPECT_EQ(out.metadata.plan_kind, in.metadata.plan_kind);
    EXPECT_EQ(out.metadata.compile_seconds, in.metadata.compile_seconds);
    EXPECT_EQ(out.metadata.device_seconds, in.metadata.device_seconds);
    EXPECT_EQ(out.metadata.created_ms, in.metadata.created_ms);
    EXPECT_EQ(out.components, in.components);
    EXPECT_EQ(out.request_hashes, in.request_hashes);
    EXPECT_EQ(out.executable, in.executable);
    EXPECT_EQ(out.metadata.tune_seconds, in.metadata.tune_seconds);
    EXPECT_EQ(out.source_text, in.source_text);
  }
  ASSERT_EQ(decoded->records.size(), 2u);
  EXPECT_EQ(decoded->records[0].measured_seconds, 0.25);
  EXPECT_EQ(decoded->records[1].error, "did not fit");
  EXPECT_EQ(decoded->records[1].tenant, "alice");
  EXPECT_EQ(decoded->records[1].compiler_version, kCompilerFormatVersion);
  EXPECT_EQ(decoded->schema_version, kSchema);
}

TEST(BundleTest, RecordsFromBeforeTenantsRoundTrip) {
  Bundle bundle;
  TuningRecord legacy = TwoEntriesOneRecord().records[0];
  legacy.tenant = "";
  legacy.compiler_version = 0;
  bundle.records.push_back(legacy);
  auto decoded = DecodeBundle(Encoded(bundle), kSchema, AcceptAll);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  ASSERT_EQ(decoded->records.size(), 1u);
  EXPECT_EQ(decoded->records[0].tenant, "");
  EXPECT_EQ(decoded->records[0].compiler_version, 0u);
}

TEST(BundleTest, EmptyBundleRoundTrips) {
  Bundle empty;
  auto decoded = DecodeBundle(Encoded(empty), kSchema, AcceptAll);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_TRUE(decoded->entries.empty());
  EXPECT_TRUE(decoded->records.empty());
}

TEST(BundleTest, EveryTruncationIsRefused) {
  const std::string bytes = Encoded(TwoEntriesOneRecord());
  for (size_t size = 0; size < bytes.size(); size += 7) {
    const std::string error = Refusal(std::string_view(bytes).substr(0, size));
    EXPECT_NE(error.find("truncated"), std::string::npos) << size << ": " << error;
  }
}

TEST(BundleTest, EveryFlippedByteIsRefused) {
  const std::string bytes = Encoded(TwoEntriesOneRecord());
  for (size_t at = 0; at < bytes.size(); at += 3) {
    std::string damaged = bytes;
    damaged[at] ^= 0x10;
    EXPECT_FALSE(Refusal(damaged).empty()) << "byte " << at;
  }
}

TEST(BundleTest, CorruptEntryIsNamed) {
  const std::string bytes = Encoded(TwoEntriesOneRecord());
  std::string damaged = bytes;
  damaged[bytes.size() / 2] ^= 0x01;  // inside the second entry's executable
  EXPECT_NE(Refusal(damaged).find("item 1: checksum mismatch"), std::string::npos) << Refusal(damaged);
}

TEST(BundleTest, ForeignMagicAndVersionsAreRefused) {
  std::string bytes = Encoded(TwoEntriesOneRecord());
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_NE(Refusal(magic).find("not a kiln bundle"), std::string::npos);

  Bundle newer_format = TwoEntriesOneRecord();
  newer_format.bundle_version = kBundleFormatVersion + 1;
  EXPECT_NE(Refusal(Encoded(newer_format)).find("format version 3, this kiln reads 1 to 2"), std::string::npos);

  Bundle other_compiler = TwoEntriesOneRecord();
  other_compiler.compiler_version = kCompilerFormatVersion + 1;
  EXPECT_NE(Refusal(Encoded(other_compiler)).find("compiler format"), std::string::npos);

  Bundle newer_schema = TwoEntriesOneRecord();
  newer_schema.schema_version = kSchema + 1;
  EXPECT_NE(Refusal(Encoded(newer_schema)).find("schema version"), std::string::npos);

  Bundle old_entry = TwoEntriesOneRecord();
  old_entry.entries[1].metadata.id.format_version = kCompilerFormatVersion + 1;
  EXPECT_NE(Refusal(Encoded(old_entry)).find("entry 1 (alice/"), std::string::npos);
}

TEST(BundleTest, MissingManifestAndUnknownItemsAreRefused) {
  const std::string bytes = Encoded(TwoEntriesOneRecord());
  // The manifest: kind, length, 2 counts and 4 checksums, its checksum.
  const size_t manifest_size = 1 + 8 + 8 * (2 + 4) + 8;
  const std::string without = bytes.substr(0, bytes.size() - manifest_size);
  EXPECT_NE(Refusal(without).find("no manifest at the end"), std::string::npos) << Refusal(without);
  std::string unknown = bytes;
  unknown[bytes.size() - manifest_size] = 9;  // the manifest's kind byte
  EXPECT_NE(Refusal(unknown).find("unknown kind 9"), std::string::npos) << Refusal(unknown);
  std::string swapped = bytes;
  swapped[bytes.size() - manifest_size] = 2;  // the manifest read as a record
  EXPECT_NE(Refusal(swapped).find("tuning record 2"), std::string::npos) << Refusal(swapped);
}

TEST(BundleTest, TrailingBytesAreRefused) {
  std::string bytes = Encoded(TwoEntriesOneRecord()) + "x";
  EXPECT_NE(Refusal(bytes).find("after the manifest"), std::string::npos);
}

TEST(BundleTest, ExecutableVerifierRefusalNamesTheEntry) {
  const std::string bytes = Encoded(TwoEntriesOneRecord());
  // TestExecutable bytes are not programs: the real verifier refuses them.
  const std::string error = Refusal(bytes, VerifyProgramBytes);
  EXPECT_NE(error.find("entry 0 (alice/"), std::string::npos) << error;
  EXPECT_NE(error.find("executable refused"), std::string::npos) << error;
}


TEST(BundleTest, AbsurdFiguresAndNamesAreRefused) {
  struct Case {
    const char* what;
    void (*damage)(Bundle&);
    const char* expected;
  };
  const Case cases[] = {
      {"infinite compile time", [](Bundle& b) { b.entries[0].metadata.compile_seconds = INFINITY; }, "compile time"},
      {"NaN device time", [](Bundle& b) { b.entries[1].metadata.device_seconds = NAN; }, "device time"},
      {"negative compile time", [](Bundle& b) { b.entries[0].metadata.compile_seconds = -1; }, "compile time"},
      {"created at INT64_MIN", [](Bundle& b) { b.entries[0].metadata.created_ms = INT64_MIN; }, "created time"},
      {"created in a century", [](Bundle& b) { b.entries[0].metadata.created_ms = kSomeDay * 2; }, "created time"},
      {"a path as tenant", [](Bundle& b) { b.entries[0].metadata.id.tenant = "../../etc"; }, "tenant '../../etc'"},
      {"a space in a tenant", [](Bundle& b) { b.entries[0].metadata.id.tenant = "bad tenant"; }, "tenant 'bad tenant'"},
      {"control bytes", [](Bundle& b) { b.entries[0].metadata.id.tenant = std::string("\n\0evil", 6); },
       "tenant '\\x0a\\x00evil'"},
      {"a 100 KB tenant", [](Bundle& b) { b.entries[0].metadata.id.tenant = std::string(100'000, 'a'); },
       "(100000 bytes)"},
      {"a chip with a slash", [](Bundle& b) { b.entries[0].metadata.id.chip = "v5e/x"; }, "chip 'v5e/x'"},
      {"a NaN measurement", [](Bundle& b) { b.records[0].measured_seconds = NAN; }, "measured time"},
      {"a record of year 1970", [](Bundle& b) { b.records[1].created_ms = 42; }, "created time"},
      {"a record tenant with a newline", [](Bundle& b) { b.records[0].tenant = "a\nb"; }, "tenant"},
  };
  for (const Case& c : cases) {
    Bundle bundle = TwoEntriesOneRecord();
    c.damage(bundle);
    const std::string error = Refusal(Encoded(bundle));
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
  }
}

TEST(BundleTest, AnItemLongerThanTheLimitOrTheFileIsRefused) {
  const std::string valid = Encoded(TwoEntriesOneRecord());
  const std::string header = valid.substr(0, 20);
  auto item_claiming = [&](uint64_t length) {
    std::string bytes = header;
    bytes.push_back(1);  // an entry
    bytes.append(reinterpret_cast<const char*>(&length), 8);
    bytes.append(100, 'x');
    return bytes;
  };
  EXPECT_NE(Refusal(item_claiming(uint64_t{1} << 40)).find("over the"), std::string::npos)
      << Refusal(item_claiming(uint64_t{1} << 40));
  // Within the limit but past the end: read in chunks, so refused as a
  // truncation without first making room for 900 MB.
  EXPECT_NE(Refusal(item_claiming(uint64_t{900} << 20)).find("truncated"), std::string::npos);
}

TEST(BundleTest, AnExecutableFiledUnderAnotherKeyOrChipIsRefused) {
  Bundle bundle = TwoEntriesOneRecord();
  const EntryId& id0 = bundle.entries[0].metadata.id;
  const EntryId& id1 = bundle.entries[1].metadata.id;
  bundle.entries[0].executable = TestProgramBytes(id0.key, id0.chip);
  bundle.entries[1].executable = TestProgramBytes(id1.key, id1.chip);
  auto decoded = DecodeBundle(Encoded(bundle), kSchema, VerifyProgramBytes);
  ASSERT_TRUE(decoded) << decoded.error().ToString();

  Bundle other_chip = bundle;
  other_chip.entries[1].executable = TestProgramBytes(id1.key, "tpu7x");
  std::string error = Refusal(Encoded(other_chip), VerifyProgramBytes);
  EXPECT_NE(error.find("entry 1"), std::string::npos) << error;
  EXPECT_NE(error.find("for tpu7x, not as the entry's"), std::string::npos) << error;

  Bundle other_key = bundle;
  other_key.entries[0].executable = bundle.entries[1].executable;  // entry 1's program filed as entry 0
  error = Refusal(Encoded(other_key), VerifyProgramBytes);
  EXPECT_NE(error.find("compiled as " + id1.key.Hex()), std::string::npos) << error;
}

TEST(BundleTest, BytesPastTheProgramAreRefused) {
  Bundle bundle = TwoEntriesOneRecord();
  bundle.entries.resize(1);
  const EntryId& id = bundle.entries[0].metadata.id;
  std::string padded = TestProgramBytes(id.key, id.chip);
  // Padding appended inside the envelope, its length and checksum made to
  // match: only the FlatBuffer's own extent shows it.
  const size_t extra = 4096;
  padded.append(extra, '\0');
  uint64_t length = padded.size() - runtime::kEnvelopeHeaderBytes;
  std::memcpy(padded.data() + 16, &length, 8);
  const uint64_t checksum = XXH3_64bits(padded.data() + runtime::kEnvelopeHeaderBytes, length);
  std::memcpy(padded.data() + 24, &checksum, 8);
  bundle.entries[0].executable = padded;
  const std::string error = Refusal(Encoded(bundle), VerifyProgramBytes);
  EXPECT_NE(error.find("past the end of its program"), std::string::npos) << error;
}

}  // namespace
}  // namespace kiln::cache
