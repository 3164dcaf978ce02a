// BundleReader: reads bundles item by item (bundle_reader.h), and
// DecodeBundle on top of it.
#include "cache/bundle_reader.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/clock.h"
#include "cache/bundle_layout.h"
#include "cache/checksum.h"
#include "cache/zstd_codec.h"

namespace kiln::cache {
namespace {

using namespace bundle_layout;

// An item's payload may hold an executable at the limit, compressed (zstd
// may grow incompressible bytes by a little), and its metadata.
constexpr uint64_t kMaxItemBytes = kMaxExecutableBytes + (uint64_t{16} << 20);
// A payload is read this much at a time, so a length that lies about a
// short file allocates about the file, not the length.
constexpr size_t kReadChunk = size_t{16} << 20;

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

Result<Hash128> GetHash(Reader& r, const char* field) {
  KILN_ASSIGN_OR_RETURN(std::string hex, r.GetString(field));
  auto hash = ParseHash128(hex);
  if (!hash) return r.Fail(std::string(field) + " is not a key: " + hash.error().ToString());
  return *hash;
}

Result<BundleEntry> DecodeEntry(std::string_view payload, size_t index, const ExecutableVerifier& verify,
                                int64_t now_ms, uint32_t format) {
  const std::string where = "entry " + std::to_string(index);
  Reader r(payload, where);
  BundleEntry entry;
  EntryMetadata& m = entry.metadata;
  KILN_ASSIGN_OR_RETURN(m.id.tenant, r.GetString("tenant"));
  KILN_ASSIGN_OR_RETURN(m.id.key, GetHash(r, "key"));
  KILN_ASSIGN_OR_RETURN(m.id.chip, r.GetString("chip"));
  KILN_ASSIGN_OR_RETURN(m.id.format_version, r.Get<uint32_t>("format version"));
  auto fail = [&](const std::string& what) { return DataLossError(where + " (" + m.id.ToString() + "): " + what); };
  if (Status named = ValidateName("tenant", m.id.tenant); !named) return fail(named.error().message);
  if (Status named = ValidateName("chip", m.id.chip); !named) return fail(named.error().message);
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
  if (format >= 2) {
    KILN_ASSIGN_OR_RETURN(m.tune_seconds, r.Get<double>("tune seconds"));
  }
  KILN_ASSIGN_OR_RETURN(m.created_ms, r.Get<int64_t>("created time"));
  for (Status checked : {ValidateSeconds("compile time", m.compile_seconds),
                         ValidateSeconds("device time", m.device_seconds),
                         ValidateSeconds("tuning time", m.tune_seconds),
                         ValidateUnixMs("created time", m.created_ms, now_ms)}) {
    if (!checked) return fail(checked.error().message);
  }
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
  KILN_ASSIGN_OR_RETURN(entry.frame, r.GetString("executable"));
  uint64_t source_bytes = 0;
  std::string source_frame;
  if (format >= 2) {
    KILN_ASSIGN_OR_RETURN(source_bytes, r.Get<uint64_t>("source text size"));
    KILN_ASSIGN_OR_RETURN(source_frame, r.GetString("source text"));
  }
  if (!r.AtEnd()) return fail("unexpected bytes after the executable");
  if (source_bytes > kMaxSourceBytes) return fail("source text of " + std::to_string(source_bytes) + " bytes");
  if (source_bytes > 0) {
    auto text = ZstdDecompress(source_frame, source_bytes, nullptr);
    if (!text) return fail("source text does not decompress: " + text.error().ToString());
    entry.source_text = std::move(*text);
    entry.source_frame = std::move(source_frame);
  } else if (!source_frame.empty()) {
    return fail("a source text frame for an empty text");
  }
  if (m.raw_bytes > kMaxExecutableBytes) return fail("executable of " + std::to_string(m.raw_bytes) + " bytes");
  auto raw = ZstdDecompress(entry.frame, m.raw_bytes, nullptr);
  if (!raw) return fail("executable does not decompress: " + raw.error().ToString());
  if (ExecutableChecksum(*raw) != m.checksum) return fail("executable checksum mismatch");
  if (Status ok = verify(m.id, *raw); !ok) return fail("executable refused: " + ok.error().ToString());
  entry.executable = std::move(*raw);
  return entry;
}

Result<TuningRecord> DecodeRecord(std::string_view payload, size_t index, int64_t now_ms) {
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
  if (record.workload_key.empty() || record.workload_key.size() > 128) return r.Fail("empty or overlong workload key");
  if (Status named = ValidateName("chip", record.chip); !named) return r.Fail(named.error().message);
  if (!record.tenant.empty() || record.compiler_version != 0) {
    if (Status named = ValidateName("tenant", record.tenant); !named) return r.Fail(named.error().message);
  }
  if (has_measured) {
    if (Status checked = ValidateSeconds("measured time", measured); !checked) return r.Fail(checked.error().message);
  }
  if (Status checked = ValidateUnixMs("created time", record.created_ms, now_ms); !checked) {
    return r.Fail(checked.error().message);
  }
  if (has_measured) record.measured_seconds = measured;
  if (has_error) record.error = std::move(error);
  return record;
}


}  // namespace

BundleReader::Source BundleReader::BytesSource(std::string_view bytes) {
  return [bytes, pos = size_t{0}](char* out, size_t n) mutable -> Result<size_t> {
    const size_t take = std::min(n, bytes.size() - pos);
    std::memcpy(out, bytes.data() + pos, take);
    pos += take;
    return take;
  };
}

BundleReader::Source BundleReader::FileSource(std::FILE* file, std::string name) {
  return [file, name = std::move(name)](char* out, size_t n) -> Result<size_t> {
    const size_t got = std::fread(out, 1, n, file);
    if (got < n && std::ferror(file)) return DataLossError("cannot read " + name);
    return got;
  };
}

BundleReader::BundleReader(Source source, ExecutableVerifier verify)
    : source_(std::move(source)), verify_(std::move(verify)), now_ms_(UnixNowMs()) {}

Result<size_t> BundleReader::ReadUpTo(char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    KILN_ASSIGN_OR_RETURN(size_t more, source_(out + got, n - got));
    if (more == 0) break;
    got += more;
  }
  offset_ += got;
  return got;
}

Status BundleReader::ReadExactly(char* out, size_t n, const std::string& what) {
  const uint64_t at = offset_;
  KILN_ASSIGN_OR_RETURN(size_t got, ReadUpTo(out, n));
  if (got < n) return DataLossError("bundle: truncated at byte " + std::to_string(at + got) + " reading " + what);
  return Ok();
}

Result<std::string> BundleReader::ReadPayload(uint64_t length, const std::string& what) {
  if (length > kMaxItemBytes) {
    return DataLossError("bundle: " + what + " claims " + std::to_string(length) + " bytes, over the " +
                         std::to_string(kMaxItemBytes) + "-byte limit on one item");
  }
  std::string payload;
  try {
    while (payload.size() < length) {
      const size_t have = payload.size();
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kReadChunk, length - have));
      payload.resize(have + chunk);
      KILN_RETURN_IF_ERROR(ReadExactly(payload.data() + have, chunk, what));
    }
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("bundle: out of memory reading " + what + " (" + std::to_string(length) +
                                  " bytes)");
  }
  return payload;
}

Result<BundleReader> BundleReader::Open(Source source, uint32_t max_schema_version, ExecutableVerifier verify) {
  BundleReader reader(std::move(source), std::move(verify));
  char header[kHeaderBytes];
  const std::string_view bytes(header, kHeaderBytes);
  KILN_ASSIGN_OR_RETURN(size_t got, reader.ReadUpTo(header, kHeaderBytes));
  const size_t compared = std::min(got, kMagic.size());
  if (bytes.substr(0, compared) != kMagic.substr(0, compared)) {
    return DataLossError("bundle: not a kiln bundle (bad magic number)");
  }
  if (got < kHeaderBytes) return DataLossError("bundle: truncated at byte " + std::to_string(got) + " in the header");
  Bundle& v = reader.versions_;
  std::memcpy(&v.bundle_version, header + 8, 4);
  std::memcpy(&v.compiler_version, header + 12, 4);
  std::memcpy(&v.schema_version, header + 16, 4);
  if (v.bundle_version < kOldestBundleFormat || v.bundle_version > kBundleFormatVersion) {
    return FailedPreconditionError("bundle: format version " + std::to_string(v.bundle_version) +
                                   ", this kiln reads " + std::to_string(kOldestBundleFormat) + " to " +
                                   std::to_string(kBundleFormatVersion));
  }
  if (v.compiler_version != kCompilerFormatVersion) {
    return FailedPreconditionError("bundle: made by compiler format " + std::to_string(v.compiler_version) +
                                   ", this kiln is " + std::to_string(kCompilerFormatVersion) +
                                   " (its entries would never be served)");
  }
  if (v.schema_version > max_schema_version) {
    return FailedPreconditionError("bundle: from a store at schema version " + std::to_string(v.schema_version) +
                                   ", newer than this kiln's " + std::to_string(max_schema_version));
  }
  return reader;
}

Status BundleReader::CheckManifest(std::string_view payload) const {
  Reader m(payload, "bundle manifest");
  KILN_ASSIGN_OR_RETURN(uint64_t entries, m.Get<uint64_t>("entry count"));
  KILN_ASSIGN_OR_RETURN(uint64_t records, m.Get<uint64_t>("record count"));
  if (entries != entries_ || records != records_) {
    return m.Fail("lists " + std::to_string(entries) + " entries and " + std::to_string(records) +
                  " records, the bundle holds " + std::to_string(entries_) + " and " + std::to_string(records_));
  }
  for (size_t i = 0; i < checksums_.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(uint64_t listed, m.Get<uint64_t>("item checksum"));
    if (listed != checksums_[i]) return m.Fail("item " + std::to_string(i) + "'s checksum differs");
  }
  if (!m.AtEnd()) return m.Fail("unexpected bytes at the end");
  return Ok();
}

Result<std::optional<BundleReader::Item>> BundleReader::Next() {
  if (failed_) return DataLossError("bundle: read past an error");
  Result<std::optional<Item>> item = ReadItem();
  if (!item) failed_ = true;
  return item;
}

Result<std::optional<BundleReader::Item>> BundleReader::ReadItem() {
  for (;;) {
    const uint64_t at = offset_;
    char head[kItemHeadBytes];
    KILN_ASSIGN_OR_RETURN(size_t got, ReadUpTo(head, kItemHeadBytes));
    if (done_) {
      if (got != 0) return DataLossError("bundle: unexpected bytes after the manifest at byte " + std::to_string(at));
      return std::optional<Item>();
    }
    if (got == 0) return DataLossError("bundle: truncated: no manifest at the end");
    const size_t index = checksums_.size();
    const std::string item = "item " + std::to_string(index);
    if (got < kItemHeadBytes) {
      return DataLossError("bundle: truncated at byte " + std::to_string(at + got) + " reading " + item + "'s length");
    }
    const uint8_t kind = static_cast<uint8_t>(head[0]);
    uint64_t length = 0;
    std::memcpy(&length, head + 1, 8);
    KILN_ASSIGN_OR_RETURN(std::string payload, ReadPayload(length, item + " payload"));
    uint64_t checksum = 0;
    KILN_RETURN_IF_ERROR(ReadExactly(reinterpret_cast<char*>(&checksum), 8, item + " checksum"));
    if (ItemChecksum(payload) != checksum) return DataLossError("bundle: " + item + ": checksum mismatch (corrupt)");
    switch (kind) {
      case kEntryItem: {
        KILN_ASSIGN_OR_RETURN(BundleEntry entry,
                              DecodeEntry(payload, entries_, verify_, now_ms_, versions_.bundle_version));
        ++entries_;
        checksums_.push_back(checksum);
        return std::optional<Item>(std::move(entry));
      }
      case kRecordItem: {
        KILN_ASSIGN_OR_RETURN(TuningRecord record, DecodeRecord(payload, records_, now_ms_));
        ++records_;
        checksums_.push_back(checksum);
        return std::optional<Item>(std::move(record));
      }
      case kManifestItem:
        KILN_RETURN_IF_ERROR(CheckManifest(payload));
        done_ = true;
        continue;  // only the end may follow
      default:
        return DataLossError("bundle: " + item + ": unknown kind " + std::to_string(kind));
    }
  }
}

Result<Bundle> DecodeBundle(std::string_view bytes, uint32_t max_schema_version, const ExecutableVerifier& verify) {
  KILN_ASSIGN_OR_RETURN(BundleReader reader,
                        BundleReader::Open(BundleReader::BytesSource(bytes), max_schema_version, verify));
  Bundle bundle = reader.versions();
  for (;;) {
    KILN_ASSIGN_OR_RETURN(std::optional<BundleReader::Item> item, reader.Next());
    if (!item) return bundle;
    if (auto* entry = std::get_if<BundleEntry>(&*item)) {
      bundle.entries.push_back(std::move(*entry));
    } else {
      bundle.records.push_back(std::get<TuningRecord>(std::move(*item)));
    }
  }
}

}  // namespace kiln::cache
