#include "cache/store_totals.h"

namespace kiln::cache {
namespace {

// Rows of (tenant, chip, quarantined, entries, raw_bytes, stored_bytes).
Status AddRows(Statement& select, StoreTotals& totals) {
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return Ok();
    const std::string tenant(select.ColumnText(0));
    const std::string chip(select.ColumnText(1));
    const bool quarantined = select.ColumnInt(2) != 0;
    const EntryCount count{.entries = select.ColumnInt(3),
                           .raw_bytes = static_cast<uint64_t>(select.ColumnInt(4)),
                           .stored_bytes = static_cast<uint64_t>(select.ColumnInt(5))};
    for (NamespaceTotals* totals_of : {&totals.by_tenant[tenant], &totals.all}) {
      if (quarantined) {
        totals_of->quarantined.Add(count);
      } else {
        totals_of->live.Add(count);
        totals_of->live_by_chip[chip].Add(count);
      }
    }
  }
}

Status AddCounters(Connection& connection, StoreTotals& totals) {
  KILN_ASSIGN_OR_RETURN(Statement counters, connection.Prepare("SELECT name, value FROM counters"));
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, counters.Step());
    if (!row) return Ok();
    if (counters.ColumnText(0) == "quarantined") totals.quarantined_total = counters.ColumnInt(1);
    if (counters.ColumnText(0) == "evicted") totals.evicted_total = counters.ColumnInt(1);
  }
}

}  // namespace

const NamespaceTotals& StoreTotals::Of(const std::string& tenant) const {
  static const NamespaceTotals kNone;
  auto it = by_tenant.find(tenant);
  return it == by_tenant.end() ? kNone : it->second;
}

Result<std::unique_ptr<TotalsReader>> TotalsReader::Open(const std::string& path, const ConnectionOptions& options) {
  ConnectionOptions read_only = options;
  read_only.read_only = true;
  read_only.cache_kib = 256;  // a few small rows
  read_only.mmap_bytes = 0;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection, Connection::Open(path, read_only));
  return std::unique_ptr<TotalsReader>(new TotalsReader(std::move(connection)));
}

Result<std::shared_ptr<const StoreTotals>> TotalsReader::Current() {
  std::lock_guard lock(mutex_);
  // Read the version first: figures read after it are at least that new,
  // so a commit in between only causes one more reload next time.
  KILN_ASSIGN_OR_RETURN(int64_t version, connection_->QueryInt("PRAGMA data_version"));
  if (snapshot_ != nullptr && version == data_version_) return snapshot_;
  KILN_ASSIGN_OR_RETURN(snapshot_, Load());
  data_version_ = version;
  return snapshot_;
}

Result<std::shared_ptr<const StoreTotals>> TotalsReader::Load() {
  auto totals = std::make_shared<StoreTotals>();
  // One read transaction, so the totals and the counters agree.
  KILN_RETURN_IF_ERROR(connection_->Execute("BEGIN"));
  auto read = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Statement select,
                          connection_->Prepare("SELECT tenant, chip, quarantined, entries, raw_bytes, stored_bytes "
                                               "FROM entry_totals"));
    KILN_RETURN_IF_ERROR(AddRows(select, *totals));
    return AddCounters(*connection_, *totals);
  };
  Status status = read();
  (void)connection_->Execute("COMMIT");
  KILN_RETURN_IF_ERROR(status);
  return std::shared_ptr<const StoreTotals>(std::move(totals));
}

Result<StoreTotals> TotalsReader::Recount(Connection& connection) {
  StoreTotals totals;
  KILN_ASSIGN_OR_RETURN(Statement select,
                        connection.Prepare("SELECT tenant, chip, quarantined, count(*), sum(raw_bytes), "
                                           "sum(stored_bytes) FROM entries GROUP BY tenant, chip, quarantined"));
  KILN_RETURN_IF_ERROR(AddRows(select, totals));
  KILN_RETURN_IF_ERROR(AddCounters(connection, totals));
  return totals;
}

}  // namespace kiln::cache
