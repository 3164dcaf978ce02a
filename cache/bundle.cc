#include "cache/bundle.h"

#include <bit>
#include <cstring>
#include <span>

#include "cache/bundle_layout.h"
#include "cache/checksum.h"
#include "cache/migrations.h"
#include "cache/zstd_codec.h"
#include "runtime/format/program.h"

namespace kiln::cache {
namespace {

using namespace bundle_layout;

static_assert(std::endian::native == std::endian::little, "bundles are written little-endian");

// Appends fixed-width and length-prefixed fields.
class Writer {
 public:
  template <typename T>
  void Put(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out_.append(bytes, sizeof(T));
  }
  void PutString(std::string_view s) {
    Put(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

Result<std::string> EncodeEntry(const BundleEntry& entry, int zstd_level) {
  const EntryMetadata& m = entry.metadata;
  Writer w;
  w.PutString(m.id.tenant);
  w.PutString(m.id.key.Hex());
  w.PutString(m.id.chip);
  w.Put(m.id.format_version);
  w.PutString(m.options);
  w.PutString(PlanKindName(m.plan_kind));
  w.Put(m.compile_seconds);
  w.Put(m.device_seconds);
  w.Put(m.tune_seconds);
  w.Put(m.created_ms);
  w.Put(static_cast<uint32_t>(entry.components.size()));
  for (const KeyComponent& c : entry.components) {
    w.PutString(c.name);
    w.PutString(c.hash.Hex());
  }
  w.Put(static_cast<uint32_t>(entry.request_hashes.size()));
  for (const Hash128& h : entry.request_hashes) w.PutString(h.Hex());
  w.Put(static_cast<uint64_t>(entry.executable.size()));
  w.Put(ExecutableChecksum(entry.executable));
  KILN_ASSIGN_OR_RETURN(std::string frame, ZstdCompress(entry.executable, zstd_level, nullptr));
  w.PutString(frame);
  w.Put(static_cast<uint64_t>(entry.source_text.size()));
  std::string source_frame;
  if (!entry.source_text.empty()) {
    KILN_ASSIGN_OR_RETURN(source_frame, ZstdCompress(entry.source_text, zstd_level, nullptr));
  }
  w.PutString(source_frame);
  return std::move(w.out());
}

std::string EncodeRecord(const TuningRecord& r) {
  Writer w;
  w.PutString(r.tenant);
  w.PutString(r.workload_key);
  w.PutString(r.chip);
  w.Put(r.compiler_version);
  w.PutString(r.plan);
  w.Put(static_cast<uint8_t>(r.measured_seconds.has_value()));
  w.Put(r.measured_seconds.value_or(0.0));
  w.Put(static_cast<uint8_t>(r.error.has_value()));
  w.PutString(r.error.value_or(""));
  w.Put(r.created_ms);
  return std::move(w.out());
}

// kind | length | payload | checksum; sets `checksum`.
std::string FramedItem(ItemKind kind, std::string_view payload, uint64_t& checksum) {
  Writer w;
  w.Put(static_cast<uint8_t>(kind));
  w.Put(static_cast<uint64_t>(payload.size()));
  w.out().append(payload);
  checksum = ItemChecksum(payload);
  w.Put(checksum);
  return std::move(w.out());
}

}  // namespace

uint32_t CurrentSchemaVersion() { return static_cast<uint32_t>(LatestVersion(EmbeddedMigrations())); }

Status VerifyProgramBytes(const EntryId& id, std::string_view executable) {
  auto program = runtime::ParseProgram(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(executable.data()), executable.size()));
  if (!program) return std::unexpected(program.error());
  if (program->key != id.key.Hex() || program->chip != id.chip) {
    return DataLossError("the executable was compiled as " + program->key + " for " + program->chip +
                         ", not as the entry's " + id.key.Hex() + " for " + id.chip);
  }
  return Ok();
}

std::string BundleEncoder::Header(const Bundle& versions) const {
  Writer w;
  w.out().append(kMagic);
  w.Put(versions.bundle_version);
  w.Put(versions.compiler_version);
  w.Put(versions.schema_version);
  return std::move(w.out());
}

Result<std::string> BundleEncoder::EntryItem(const BundleEntry& entry) {
  KILN_ASSIGN_OR_RETURN(std::string payload, EncodeEntry(entry, zstd_level_));
  ++entries_;
  return FramedItem(kEntryItem, payload, checksums_.emplace_back());
}

std::string BundleEncoder::RecordItem(const TuningRecord& record) {
  ++records_;
  return FramedItem(kRecordItem, EncodeRecord(record), checksums_.emplace_back());
}

std::string BundleEncoder::Manifest() const {
  Writer manifest;
  manifest.Put(entries_);
  manifest.Put(records_);
  for (uint64_t c : checksums_) manifest.Put(c);
  uint64_t unlisted = 0;
  return FramedItem(kManifestItem, manifest.out(), unlisted);
}

Result<std::string> EncodeBundle(const Bundle& bundle, int zstd_level) {
  BundleEncoder encoder(zstd_level);
  std::string out = encoder.Header(bundle);
  for (const BundleEntry& entry : bundle.entries) {
    KILN_ASSIGN_OR_RETURN(std::string item, encoder.EntryItem(entry));
    out += item;
  }
  for (const TuningRecord& record : bundle.records) out += encoder.RecordItem(record);
  out += encoder.Manifest();
  return out;
}

}  // namespace kiln::cache
