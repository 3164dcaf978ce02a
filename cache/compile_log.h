// CompileLog: the store's log of compiles by module name (the compile_log
// table), what recompile diagnostics group (server/service/recompile_report.h).
//
// One row per (tenant, module name, chip, key); counting a compile again
// adds to its row. The log keeps the newest `max_rows` rows. Writes go
// through the store's write path (store_writer.h) and fail like its other
// writes on a full disk or a read-only store; reads use the reader pool.
// Owned by the CacheStore (CacheStore::compile_log()); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cache/entry.h"
#include "cache/reader_pool.h"
#include "cache/store_writer.h"

namespace kiln::cache {

// One program a module name was compiled as.
struct CompileRecord {
  std::string tenant;
  std::string module_name;
  std::string chip;
  Hash128 key;
  std::string client;                   // the last compile's X-Kiln-Client; empty when none
  std::vector<std::string> parameters;  // entry parameter shapes ("f32[16,128]")
  // hlo::StructureHash of the module as sent, in hex ('' when unknown):
  // rows of one name are one program's variants only when it matches.
  std::string structure;
  std::string options;                  // canonical compile options ("plan=heuristic;topology=2x2")
  int64_t compiles = 1;
  double compile_seconds = 0;
  int64_t first_ms = 0;  // set by the log when 0
  int64_t last_ms = 0;
};

struct CompileRecordFilter {
  std::optional<std::string> tenant = std::nullopt;
  std::optional<std::string> module_name = std::nullopt;
  // Only programs (name, chip and structure) compiled as at least this many
  // keys.
  int min_keys = 1;
  int limit = 10000;  // rows
};

class CompileLog {
 public:
  CompileLog(StoreWriter& writer, ReaderPool& readers, int64_t max_rows, UnixClock clock)
      : writer_(writer), readers_(readers), max_rows_(max_rows), clock_(std::move(clock)) {}

  // Counts one compile of `record` (tenant, module name, chip, key): a new
  // row, or compiles, seconds, client and last_ms added to the one there.
  // Returns how many other keys the name had on that chip before with the
  // same structure (a recompile of the same program).
  Result<int64_t> Record(const CompileRecord& record);
  // Rows oldest first within each (tenant, name, chip), names in order.
  Result<std::vector<CompileRecord>> Records(const CompileRecordFilter& filter);

 private:
  StoreWriter& writer_;
  ReaderPool& readers_;
  const int64_t max_rows_;
  const UnixClock clock_;
};

}  // namespace kiln::cache
