#include "tools/inspect_bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cache/bundle.h"
#include "cache/cache_store.h"
#include "cache/migrations.h"

namespace kiln::tools {
namespace {

Result<std::unique_ptr<cache::CacheStore>> OpenStore(const std::string& db) {
  cache::CacheStoreOptions options;
  options.path = db;
  options.dictionary_training_puts = 0;
  return cache::CacheStore::Open(std::move(options));
}

// Writes `bytes` to `path` via PATH.tmp-PID, synced, then renamed.
Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "cannot create " + temp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return ErrnoError(error, "cannot write " + temp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return ErrnoError(error, "cannot write " + temp);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return ErrnoError(error, "cannot rename " + temp + " to " + path);
  }
  return Ok();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return InvalidArgumentError(path + " is a folder, not a bundle");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open bundle " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return DataLossError("cannot read bundle " + path);
  return bytes;
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
  std::error_code error;
  if (!std::filesystem::is_regular_file(args.db, error)) return NotFoundError("no cache database " + args.db);
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args.db));
  cache::BundleReport report;
  KILN_ASSIGN_OR_RETURN(cache::Bundle bundle, store->ExportBundle(selection, report));
  KILN_ASSIGN_OR_RETURN(std::string bytes, cache::EncodeBundle(bundle));
  KILN_RETURN_IF_ERROR(WriteFileAtomically(args.file, bytes));
  PrintReport("exported", report, args.json);
  return Ok();
}

Status ImportBundleFile(const BundleArgs& args) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(args.file));
  const auto schema = static_cast<uint32_t>(cache::LatestVersion(cache::EmbeddedMigrations()));
  auto bundle = cache::DecodeBundle(bytes, schema);
  if (!bundle) return bundle.error().WithContext("refused " + args.file + ", nothing imported");
  KILN_ASSIGN_OR_RETURN(auto store, OpenStore(args.db));
  KILN_ASSIGN_OR_RETURN(cache::BundleReport report, store->ImportBundle(*bundle));
  PrintReport("imported", report, args.json);
  return Ok();
}

}  // namespace kiln::tools
