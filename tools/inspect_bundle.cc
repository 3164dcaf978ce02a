#include "tools/inspect_bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "cache/bundle.h"
#include "cache/bundle_reader.h"
#include "cache/cache_store.h"
#include "tools/store_open.h"

namespace kiln::tools {
namespace {


// A file written under PATH.tmp-PID and renamed to PATH by Commit: until
// then PATH is untouched, and the temporary file is removed when the
// writer is dropped (a killed process leaves only the .tmp file).
class AtomicFileWriter {
 public:
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path) {
    std::unique_ptr<AtomicFileWriter> writer(new AtomicFileWriter(path));
    writer->fd_ = ::open(writer->temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (writer->fd_ < 0) return ErrnoError(errno, "cannot create " + writer->temp_);
    return writer;
  }
  ~AtomicFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  Status Append(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError(errno, "cannot write " + temp_);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Ok();
  }
  // Syncs, closes and renames into place.
  Status Commit() {
    if (::fsync(fd_) != 0) return ErrnoError(errno, "cannot write " + temp_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return ErrnoError(errno, "cannot write " + temp_);
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      return ErrnoError(errno, "cannot rename " + temp_ + " to " + path_);
    }
    committed_ = true;
    return Ok();
  }

 private:
  explicit AtomicFileWriter(std::string path)
      : path_(std::move(path)), temp_(path_ + ".tmp-" + std::to_string(getpid())) {}
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The bundle file, open for reading; closed when the pointer is dropped.
using BundleFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
Result<BundleFile> OpenBundleFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return InvalidArgumentError(path + " is a folder, not a bundle");
  BundleFile file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return ErrnoError(errno, "cannot open bundle " + path);
  return file;
}

void PrintReport(const char* verb, const cache::BundleReport& r, bool json) {
  if (json) {
    nlohmann::json out = {{verb, {{"entries", r.entries}, {"records", r.records}}}};
    if (std::string(verb) == "imported") {
      out["already_present"] = {{"entries", r.entries_present}, {"records", r.records_present}};
      out["conflicts"] = r.conflicts;
    } else {
      out["skipped_corrupt"] = r.skipped_corrupt;
    }
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  if (std::string(verb) == "imported") {
    std::printf("entries: imported %lld, already present %lld, conflicts %lld (kept the stored copy)\n"
                "tuning records: imported %lld, already present %lld\n",
                static_cast<long long>(r.entries), static_cast<long long>(r.entries_present),
                static_cast<long long>(r.conflicts), static_cast<long long>(r.records),
                static_cast<long long>(r.records_present));
    return;
  }
  std::printf("exported %lld entries and %lld tuning records", static_cast<long long>(r.entries),
              static_cast<long long>(r.records));
  if (r.skipped_corrupt > 0) {
    std::printf("; skipped %lld corrupt entries (now quarantined)", static_cast<long long>(r.skipped_corrupt));
  }
  std::printf("\n");
}

}  // namespace

Result<int64_t> ParseSinceTime(const std::string& text) {
  int64_t seconds = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (error == std::errc() && end == text.data() + text.size()) return seconds * 1000;
  std::tm tm = {};
  const char* rest = strptime(text.c_str(), "%Y-%m-%d", &tm);
  if (rest != nullptr && *rest == 'T') rest = strptime(rest + 1, "%H:%M:%S", &tm);
  if (rest != nullptr && *rest == 'Z') ++rest;
  if (rest == nullptr || *rest != '\0') {
    return InvalidArgumentError("--since " + text + ": expected YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ or Unix seconds");
  }
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

Status ExportBundleFile(const BundleArgs& args) {
  cache::BundleSelection selection;
  if (!args.tenant.empty()) selection.tenant = args.tenant;
  if (!args.chip.empty()) selection.chip = args.chip;
  for (const std::string& key : args.keys) {
    KILN_ASSIGN_OR_RETURN(hlo::Hash128 hash, cache::ParseHash128(key));
    selection.keys.push_back(hash);
  }
  if (!args.since.empty()) {
    KILN_ASSIGN_OR_RETURN(selection.since_ms, ParseSinceTime(args.since));
  }
  KILN_ASSIGN_OR_RETURN(auto store, OpenToolStore(args.db, StoreAccess::kLookOnly));
  KILN_ASSIGN_OR_RETURN(auto out, AtomicFileWriter::Create(args.file));
  cache::BundleEncoder encoder;
  cache::Bundle versions;
  versions.schema_version = cache::CurrentSchemaVersion();
  KILN_RETURN_IF_ERROR(out->Append(encoder.Header(versions)));
  cache::BundleSink sink{.entry = [&](const cache::BundleEntry& entry) -> Status {
                           KILN_ASSIGN_OR_RETURN(std::string item, encoder.EntryItem(entry));
                           return out->Append(item);
                         },
                         .record = [&](const cache::TuningRecord& record) -> Status {
                           return out->Append(encoder.RecordItem(record));
                         }};
  cache::BundleReport report;
  KILN_RETURN_IF_ERROR(store->bundles().Export(selection, sink, report));
  KILN_RETURN_IF_ERROR(out->Append(encoder.Manifest()));
  KILN_RETURN_IF_ERROR(out->Commit());
  PrintReport("exported", report, args.json);
  return Ok();
}

Status ImportBundleFile(const BundleArgs& args) {
  cache::ImportOptions options;
  if (!args.tenant.empty()) {
    KILN_RETURN_IF_ERROR(cache::ValidateName("--tenant", args.tenant));
    options.tenant = args.tenant;
  }
  // First pass: the whole bundle checked, nothing written.
  {
    KILN_ASSIGN_OR_RETURN(BundleFile file, OpenBundleFile(args.file));
    Status checked = [&]() -> Status {
      KILN_ASSIGN_OR_RETURN(cache::BundleReader reader,
                            cache::BundleReader::Open(cache::BundleReader::FileSource(file.get(), args.file),
                                                      cache::CurrentSchemaVersion()));
      for (;;) {
        KILN_ASSIGN_OR_RETURN(std::optional<cache::BundleReader::Item> item, reader.Next());
        if (!item) return Ok();
      }
    }();
    if (!checked) return checked.error().WithContext("refused " + args.file + ", nothing imported");
  }
  // Second pass: read (and checked) again, written in batches.
  KILN_ASSIGN_OR_RETURN(BundleFile file, OpenBundleFile(args.file));
  KILN_ASSIGN_OR_RETURN(cache::BundleReader reader,
                        cache::BundleReader::Open(cache::BundleReader::FileSource(file.get(), args.file),
                                                  cache::CurrentSchemaVersion()));
  KILN_ASSIGN_OR_RETURN(auto store, OpenToolStore(args.db, StoreAccess::kCreateIfMissing));
  Result<cache::BundleReport> report = store->bundles().Import(reader, options);
  if (!report) return report.error().WithContext("importing " + args.file);
  PrintReport("imported", *report, args.json);
  return Ok();
}

}  // namespace kiln::tools
