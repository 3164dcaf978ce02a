// CacheStore::TrainDictionary: a zstd dictionary kept only when it pays.
#include "cache/cache_store.h"
#include "cache/store_rows.h"

namespace kiln::cache {
namespace {

constexpr size_t kMinTrainingSamples = 8;
constexpr size_t kMaxDictionaryBytes = 110 * 1024;  // zstd's default size

}  // namespace

Result<DictionaryReport> CacheStore::TrainDictionary(size_t max_samples, double min_gain) {
  DictionaryReport report;
  std::vector<StoredRow> rows;
  {
    KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_->Acquire());
    KILN_ASSIGN_OR_RETURN(Statement select,
                          reader->Prepare("SELECT " KILN_ENTRY_METADATA_COLUMNS ", frame FROM entries JOIN executables ON entry_id = id "
                                          "WHERE quarantined = 0 ORDER BY last_hit_ms DESC LIMIT ?1"));
    select.Bind(1, static_cast<int64_t>(max_samples));
    while (true) {
      KILN_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      StoredRow stored;
      KILN_ASSIGN_OR_RETURN(stored.metadata, MetadataFromRow(select));
      stored.frame = select.ColumnBlob(kEntryMetadataColumnCount);
      rows.push_back(std::move(stored));
    }
  }
  // Every fifth executable is held out to measure the dictionary honestly.
  std::vector<std::string> training;
  std::vector<std::string> holdout;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto raw = DecodeRow(rows[i]);
    if (!raw) continue;  // VerifyAll/Get quarantine it; not a sample
    (i % 5 == 4 ? holdout : training).push_back(std::move(*raw));
  }
  report.training_samples = training.size();
  report.holdout_samples = holdout.size();
  if (training.size() < kMinTrainingSamples || holdout.empty()) {
    report.reason = "too few executables (" + std::to_string(training.size() + holdout.size()) + ") to train on";
    return report;
  }
  auto trained = TrainZstdDictionary(training, kMaxDictionaryBytes);
  if (!trained) {
    report.reason = trained.error().ToString();
    return report;
  }
  KILN_ASSIGN_OR_RETURN(auto dictionary, ZstdDictionary::Create(*trained, options_.zstd_level));
  report.dictionary_id = dictionary->id();
  for (const std::string& sample : holdout) {
    report.holdout_raw_bytes += sample.size();
    KILN_ASSIGN_OR_RETURN(std::string without, ZstdCompress(sample, options_.zstd_level, nullptr));
    KILN_ASSIGN_OR_RETURN(std::string with, ZstdCompress(sample, options_.zstd_level, dictionary.get()));
    report.holdout_bytes_without += without.size();
    report.holdout_bytes_with += with.size();
  }
  // The dictionary itself is stored once; it is small beside a full store.
  const double gain = 1.0 - static_cast<double>(report.holdout_bytes_with) /
                                static_cast<double>(std::max<uint64_t>(report.holdout_bytes_without, 1));
  if (gain < min_gain) {
    report.reason = "saves " + std::to_string(gain * 100) + "% on held-out executables, below the " +
                    std::to_string(min_gain * 100) + "% threshold";
    return report;
  }
  // Outside the write protocol: a dictionary that cannot be stored (a full
  // disk) only means entries go without one.
  KILN_RETURN_IF_ERROR(writer_->Locked([&](Connection& writer) -> Status {
    KILN_ASSIGN_OR_RETURN(Statement insert,
                          writer.Prepare("INSERT OR REPLACE INTO dictionaries (id, bytes, created_ms) "
                                         "VALUES (?1, ?2, ?3)"));
    insert.Bind(1, static_cast<int64_t>(dictionary->id())).BindBlob(2, dictionary->bytes()).Bind(3, Now());
    KILN_RETURN_IF_ERROR(insert.Run());
    return LoadDictionariesLocked(writer);
  }));
  report.kept = true;
  report.reason = "saves " + std::to_string(gain * 100) + "% on held-out executables";
  return report;
}

}  // namespace kiln::cache
