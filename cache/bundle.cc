#include "cache/bundle.h"

#include <bit>
#include <cstring>
#include <span>

#include "cache/checksum.h"
#include "cache/migrations.h"
#include "cache/zstd_codec.h"
#include "runtime/format/program.h"

namespace kiln::cache {
namespace {

static_assert(std::endian::native == std::endian::little, "bundles are written little-endian");

constexpr std::string_view kMagic = "KILNBNDL";
constexpr int kBundleZstdLevel = 3;

enum ItemKind : uint8_t { kEntryItem = 1, kRecordItem = 2, kManifestItem = 3 };

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

// Reads fields, failing (never reading past the end) with the field named.
class Reader {
 public:
  Reader(std::string_view bytes, std::string where) : bytes_(bytes), where_(std::move(where)) {}
  template <typename T>
  Result<T> Get(const char* field) {
    if (bytes_.size() - pos_ < sizeof(T)) return Truncated(field);
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  Result<std::string_view> GetBytes(size_t n, const char* field) {
    if (bytes_.size() - pos_ < n) return Truncated(field);
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  Result<std::string> GetString(const char* field) {
    KILN_ASSIGN_OR_RETURN(uint32_t n, Get<uint32_t>(field));
    KILN_ASSIGN_OR_RETURN(std::string_view s, GetBytes(n, field));
    return std::string(s);
  }
  bool AtEnd() const { return pos_ == bytes_.size(); }
  size_t pos() const { return pos_; }
  Error Fail(const std::string& what) const { return DataLossError(where_ + ": " + what); }

 private:
  Error Truncated(const char* field) const {
    return DataLossError(where_ + ": truncated at byte " + std::to_string(pos_) + " reading " + field);
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  std::string where_;
};

uint64_t ItemChecksum(std::string_view payload) { return ExecutableChecksum(payload); }

Result<std::string> EncodeEntry(const BundleEntry& entry) {
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
  KILN_ASSIGN_OR_RETURN(std::string frame, ZstdCompress(entry.executable, kBundleZstdLevel, nullptr));
  w.PutString(frame);
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

Result<Hash128> GetHash(Reader& r, const char* field) {
  KILN_ASSIGN_OR_RETURN(std::string hex, r.GetString(field));
  auto hash = ParseHash128(hex);
  if (!hash) return r.Fail(std::string(field) + " is not a key: " + hash.error().ToString());
  return *hash;
}

Result<BundleEntry> DecodeEntry(std::string_view payload, size_t index, const ExecutableVerifier& verify) {
  const std::string where = "entry " + std::to_string(index);
  Reader r(payload, where);
  BundleEntry entry;
  EntryMetadata& m = entry.metadata;
  KILN_ASSIGN_OR_RETURN(m.id.tenant, r.GetString("tenant"));
  KILN_ASSIGN_OR_RETURN(m.id.key, GetHash(r, "key"));
  KILN_ASSIGN_OR_RETURN(m.id.chip, r.GetString("chip"));
  KILN_ASSIGN_OR_RETURN(m.id.format_version, r.Get<uint32_t>("format version"));
  auto fail = [&](const std::string& what) { return DataLossError(where + " (" + m.id.ToString() + "): " + what); };
  if (m.id.tenant.empty() || m.id.chip.empty()) return fail("empty tenant or chip");
  if (m.id.format_version != kCompilerFormatVersion) {
    return FailedPreconditionError(where + " (" + m.id.ToString() + "): compiler format " +
                                   std::to_string(m.id.format_version) + ", this kiln is " +
                                   std::to_string(kCompilerFormatVersion));
  }
  KILN_ASSIGN_OR_RETURN(m.options, r.GetString("options"));
  KILN_ASSIGN_OR_RETURN(std::string plan, r.GetString("plan kind"));
  auto kind = ParsePlanKind(plan);
  if (!kind) return fail("unknown plan kind '" + plan + "'");
  m.plan_kind = *kind;
  KILN_ASSIGN_OR_RETURN(m.compile_seconds, r.Get<double>("compile seconds"));
  KILN_ASSIGN_OR_RETURN(m.device_seconds, r.Get<double>("device seconds"));
  KILN_ASSIGN_OR_RETURN(m.created_ms, r.Get<int64_t>("created time"));
  m.last_hit_ms = m.created_ms;
  KILN_ASSIGN_OR_RETURN(uint32_t components, r.Get<uint32_t>("component count"));
  for (uint32_t i = 0; i < components; ++i) {
    KeyComponent c;
    KILN_ASSIGN_OR_RETURN(c.name, r.GetString("component name"));
    KILN_ASSIGN_OR_RETURN(c.hash, GetHash(r, "component hash"));
    entry.components.push_back(std::move(c));
  }
  KILN_ASSIGN_OR_RETURN(uint32_t requests, r.Get<uint32_t>("request hash count"));
  for (uint32_t i = 0; i < requests; ++i) {
    KILN_ASSIGN_OR_RETURN(Hash128 h, GetHash(r, "request hash"));
    entry.request_hashes.push_back(h);
  }
  KILN_ASSIGN_OR_RETURN(m.raw_bytes, r.Get<uint64_t>("executable size"));
  KILN_ASSIGN_OR_RETURN(m.checksum, r.Get<uint64_t>("executable checksum"));
  KILN_ASSIGN_OR_RETURN(std::string frame, r.GetString("executable"));
  if (!r.AtEnd()) return fail("unexpected bytes after the executable");
  if (m.raw_bytes > kMaxExecutableBytes) return fail("executable of " + std::to_string(m.raw_bytes) + " bytes");
  auto raw = ZstdDecompress(frame, m.raw_bytes, nullptr);
  if (!raw) return fail("executable does not decompress: " + raw.error().ToString());
  if (ExecutableChecksum(*raw) != m.checksum) return fail("executable checksum mismatch");
  if (Status ok = verify(*raw); !ok) return fail("executable refused: " + ok.error().ToString());
  entry.executable = std::move(*raw);
  return entry;
}

Result<TuningRecord> DecodeRecord(std::string_view payload, size_t index) {
  Reader r(payload, "tuning record " + std::to_string(index));
  TuningRecord record;
  KILN_ASSIGN_OR_RETURN(record.tenant, r.GetString("tenant"));
  KILN_ASSIGN_OR_RETURN(record.workload_key, r.GetString("workload key"));
  KILN_ASSIGN_OR_RETURN(record.chip, r.GetString("chip"));
  KILN_ASSIGN_OR_RETURN(record.compiler_version, r.Get<uint32_t>("compiler version"));
  KILN_ASSIGN_OR_RETURN(record.plan, r.GetString("plan"));
  KILN_ASSIGN_OR_RETURN(uint8_t has_measured, r.Get<uint8_t>("measured flag"));
  KILN_ASSIGN_OR_RETURN(double measured, r.Get<double>("measured seconds"));
  KILN_ASSIGN_OR_RETURN(uint8_t has_error, r.Get<uint8_t>("error flag"));
  KILN_ASSIGN_OR_RETURN(std::string error, r.GetString("error"));
  KILN_ASSIGN_OR_RETURN(record.created_ms, r.Get<int64_t>("created time"));
  if (!r.AtEnd()) return r.Fail("unexpected bytes after the record");
  if (has_measured > 1 || has_error > 1 || has_measured == has_error) {
    return r.Fail("needs either a measured time or an error");
  }
  // The tenant may be empty: records from before records had tenants
  // (compiler version 0, never reused) travel as they are.
  if (record.workload_key.empty() || record.chip.empty()) return r.Fail("empty workload key or chip");
  if (has_measured) record.measured_seconds = measured;
  if (has_error) record.error = std::move(error);
  return record;
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

Status VerifyProgramBytes(std::string_view executable) {
  auto program = runtime::ParseProgram(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(executable.data()), executable.size()));
  if (!program) return std::unexpected(program.error());
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
  KILN_ASSIGN_OR_RETURN(std::string payload, EncodeEntry(entry));
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

Result<std::string> EncodeBundle(const Bundle& bundle) {
  BundleEncoder encoder;
  std::string out = encoder.Header(bundle);
  for (const BundleEntry& entry : bundle.entries) {
    KILN_ASSIGN_OR_RETURN(std::string item, encoder.EntryItem(entry));
    out += item;
  }
  for (const TuningRecord& record : bundle.records) out += encoder.RecordItem(record);
  out += encoder.Manifest();
  return out;
}

Result<Bundle> DecodeBundle(std::string_view bytes, uint32_t max_schema_version, const ExecutableVerifier& verify) {
  Reader r(bytes, "bundle");
  KILN_ASSIGN_OR_RETURN(std::string_view magic, r.GetBytes(kMagic.size(), "the magic number"));
  if (magic != kMagic) return r.Fail("not a kiln bundle (bad magic number)");
  Bundle bundle;
  KILN_ASSIGN_OR_RETURN(bundle.bundle_version, r.Get<uint32_t>("the bundle format version"));
  KILN_ASSIGN_OR_RETURN(bundle.compiler_version, r.Get<uint32_t>("the compiler format version"));
  KILN_ASSIGN_OR_RETURN(bundle.schema_version, r.Get<uint32_t>("the store schema version"));
  if (bundle.bundle_version != kBundleFormatVersion) {
    return FailedPreconditionError("bundle: format version " + std::to_string(bundle.bundle_version) +
                                   ", this kiln reads " + std::to_string(kBundleFormatVersion));
  }
  if (bundle.compiler_version != kCompilerFormatVersion) {
    return FailedPreconditionError("bundle: made by compiler format " + std::to_string(bundle.compiler_version) +
                                   ", this kiln is " + std::to_string(kCompilerFormatVersion) +
                                   " (its entries would never be served)");
  }
  if (bundle.schema_version > max_schema_version) {
    return FailedPreconditionError("bundle: from a store at schema version " + std::to_string(bundle.schema_version) +
                                   ", newer than this kiln's " + std::to_string(max_schema_version));
  }
  std::vector<uint64_t> checksums;
  bool have_manifest = false;
  while (!r.AtEnd()) {
    if (have_manifest) return r.Fail("unexpected bytes after the manifest at byte " + std::to_string(r.pos()));
    const size_t index = checksums.size();
    const std::string item = "item " + std::to_string(index);
    KILN_ASSIGN_OR_RETURN(uint8_t kind, r.Get<uint8_t>((item + " kind").c_str()));
    KILN_ASSIGN_OR_RETURN(uint64_t length, r.Get<uint64_t>((item + " length").c_str()));
    KILN_ASSIGN_OR_RETURN(std::string_view payload, r.GetBytes(length, (item + " payload").c_str()));
    KILN_ASSIGN_OR_RETURN(uint64_t checksum, r.Get<uint64_t>((item + " checksum").c_str()));
    if (ItemChecksum(payload) != checksum) return r.Fail(item + ": checksum mismatch (corrupt)");
    switch (kind) {
      case kEntryItem: {
        KILN_ASSIGN_OR_RETURN(BundleEntry entry, DecodeEntry(payload, bundle.entries.size(), verify));
        bundle.entries.push_back(std::move(entry));
        break;
      }
      case kRecordItem: {
        KILN_ASSIGN_OR_RETURN(TuningRecord record, DecodeRecord(payload, bundle.records.size()));
        bundle.records.push_back(std::move(record));
        break;
      }
      case kManifestItem: {
        Reader m(payload, "bundle manifest");
        KILN_ASSIGN_OR_RETURN(uint64_t entries, m.Get<uint64_t>("entry count"));
        KILN_ASSIGN_OR_RETURN(uint64_t records, m.Get<uint64_t>("record count"));
        if (entries != bundle.entries.size() || records != bundle.records.size()) {
          return m.Fail("lists " + std::to_string(entries) + " entries and " + std::to_string(records) +
                        " records, the bundle holds " + std::to_string(bundle.entries.size()) + " and " +
                        std::to_string(bundle.records.size()));
        }
        for (size_t i = 0; i < checksums.size(); ++i) {
          KILN_ASSIGN_OR_RETURN(uint64_t listed, m.Get<uint64_t>("item checksum"));
          if (listed != checksums[i]) return m.Fail("item " + std::to_string(i) + "'s checksum differs");
        }
        if (!m.AtEnd()) return m.Fail("unexpected bytes at the end");
        have_manifest = true;
        break;
      }
      default:
        return r.Fail(item + ": unknown kind " + std::to_string(kind));
    }
    checksums.push_back(checksum);
  }
  if (!have_manifest) return r.Fail("truncated: no manifest at the end");
  return bundle;
}

}  // namespace kiln::cache
