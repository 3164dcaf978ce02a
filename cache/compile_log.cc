#include "cache/compile_log.h"

namespace kiln::cache {
namespace {

// Shapes never hold a newline: the column is one shape per line.
std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "\n") + lines[i];
  return out;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

Result<int64_t> CompileLog::Record(const CompileRecord& record) {
  if (record.tenant.empty() || record.module_name.empty() || record.chip.empty()) {
    return InvalidArgumentError("cache: a compile record needs a tenant, a module name and a chip");
  }
  for (const std::string& shape : record.parameters) {
    if (shape.find('\n') != std::string::npos) return InvalidArgumentError("cache: a parameter shape holds a newline");
  }
  const int64_t now = record.last_ms != 0 ? record.last_ms : clock_();
  int64_t other_keys = 0;
  KILN_RETURN_IF_ERROR(writer_.Write([&](Connection& writer) -> Status {
    KILN_ASSIGN_OR_RETURN(Statement count,
                          writer.Prepare("SELECT count(*) FROM compile_log WHERE tenant = ?1 AND module_name = ?2 "
                                           "AND chip = ?3 AND key != ?4 AND structure = ?5"));
    count.BindText(1, record.tenant).BindText(2, record.module_name).BindText(3, record.chip);
    count.BindText(5, record.structure);
    KILN_ASSIGN_OR_RETURN(bool row, count.BindText(4, record.key.Hex()).Step());
    other_keys = row ? count.ColumnInt(0) : 0;
    count.Reset();
    KILN_ASSIGN_OR_RETURN(
        Statement upsert,
        writer.Prepare("INSERT INTO compile_log (tenant, module_name, chip, key, client, parameters, compiles, "
                         "compile_seconds, first_ms, last_ms, structure, options) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
                         "ON CONFLICT (tenant, module_name, chip, key) DO UPDATE SET "
                         "client = ?5, parameters = ?6, compiles = compiles + ?7, "
                         "compile_seconds = compile_seconds + ?8, last_ms = ?10, structure = ?11, options = ?12"));
    upsert.BindText(1, record.tenant).BindText(2, record.module_name).BindText(3, record.chip);
    upsert.BindText(4, record.key.Hex()).BindText(5, record.client).BindText(6, JoinLines(record.parameters));
    upsert.Bind(7, record.compiles).Bind(8, record.compile_seconds);
    upsert.Bind(9, record.first_ms != 0 ? record.first_ms : now).Bind(10, now);
    upsert.BindText(11, record.structure).BindText(12, record.options);
    KILN_RETURN_IF_ERROR(upsert.Run());
    KILN_ASSIGN_OR_RETURN(Statement trim,
                          writer.Prepare("DELETE FROM compile_log WHERE id <= (SELECT MAX(id) FROM compile_log) - ?1"));
    // The newest rows by id (an upsert keeps its row's id).
    return trim.Bind(1, max_rows_).Run();
  }));
  return other_keys;
}

Result<std::vector<CompileRecord>> CompileLog::Records(const CompileRecordFilter& filter) {
  KILN_ASSIGN_OR_RETURN(ReaderLease reader, readers_.Acquire());
  KILN_ASSIGN_OR_RETURN(
      Statement select,
      reader->Prepare("SELECT c.tenant, c.module_name, c.chip, c.key, c.client, c.parameters, c.compiles, "
                      "c.compile_seconds, c.first_ms, c.last_ms, c.structure, c.options FROM compile_log c "
                      "JOIN (SELECT tenant, module_name, chip, structure FROM compile_log "
                      "      WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR module_name = ?2) "
                      "      GROUP BY tenant, module_name, chip, structure HAVING count(*) >= ?3) g "
                      "ON g.tenant = c.tenant AND g.module_name = c.module_name AND g.chip = c.chip "
                      "AND g.structure = c.structure "
                      "ORDER BY c.tenant, c.module_name, c.chip, c.structure, c.first_ms, c.id LIMIT ?4"));
  filter.tenant ? select.BindText(1, *filter.tenant) : select.BindNull(1);
  filter.module_name ? select.BindText(2, *filter.module_name) : select.BindNull(2);
  select.Bind(3, int64_t{filter.min_keys}).Bind(4, int64_t{filter.limit});
  std::vector<CompileRecord> records;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    CompileRecord record;
    record.tenant = select.ColumnText(0);
    record.module_name = select.ColumnText(1);
    record.chip = select.ColumnText(2);
    KILN_ASSIGN_OR_RETURN(record.key, ParseHash128(select.ColumnText(3)));
    record.client = select.ColumnText(4);
    record.parameters = SplitLines(select.ColumnText(5));
    record.compiles = select.ColumnInt(6);
    record.compile_seconds = select.ColumnDouble(7);
    record.first_ms = select.ColumnInt(8);
    record.last_ms = select.ColumnInt(9);
    record.structure = select.ColumnText(10);
    record.options = select.ColumnText(11);
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace kiln::cache
