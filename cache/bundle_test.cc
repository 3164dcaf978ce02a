// The bundle codec: round trip, and every kind of damage refused with the
// item at fault named.
#include "cache/bundle.h"

#include <gtest/gtest.h>

#include "cache/testing/test_store.h"

namespace kiln::cache {
namespace {

using testing::TestExecutable;
using testing::TestId;

constexpr uint32_t kSchema = 6;

Status AcceptAll(std::string_view) { return Ok(); }

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
    entry.metadata.created_ms = 1000 * n;
    entry.components = {{"entry body", Hash128{n, 9}}, {"parameter 0", Hash128{3, n}}};
    entry.request_hashes = {Hash128{n, 77}};
    entry.executable = TestExecutable(n, 5000);
    bundle.entries.push_back(std::move(entry));
  }
  TuningRecord record;
  record.tenant = "alice";
  record.workload_key = Hash128{5, 6}.Hex();
  record.chip = "v5e";
  record.plan = "tile=128";
  record.measured_seconds = 0.25;
  record.created_ms = 42;
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
  EXPECT_NE(Refusal(Encoded(newer_format)).find("format version 2, this kiln reads 1"), std::string::npos);

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

}  // namespace
}  // namespace kiln::cache
