// CacheStore: swapping a tuned executable in under the key it was tuned for.
#include "cache/cache_store.h"
#include "cache/store_rows.h"

namespace kiln::cache {
namespace {

// What the swap compares against: the entry stored now.
struct StoredVersion {
  uint64_t checksum = 0;
  PlanKind plan_kind = PlanKind::kHeuristic;
  double device_seconds = 0;
  double compile_seconds = 0;
};

Status CheckReplaceable(const EntryId& id, const std::optional<StoredVersion>& stored, uint64_t expected_checksum,
                        double tuned_device_seconds) {
  if (!stored) {
    return NotFoundError("cache: no entry " + id.ToString() + " to replace with a tuned executable");
  }
  if (stored->checksum != expected_checksum) {
    return AbortedError("cache: entry " + id.ToString() + " changed since tuning started (stored checksum " +
                        std::to_string(stored->checksum) + ", expected " + std::to_string(expected_checksum) +
                        "); the tuned executable is not stored")
        .WithReason(std::string(kEntryChanged));
  }
  if (stored->plan_kind == PlanKind::kTuned && stored->device_seconds <= tuned_device_seconds) {
    return FailedPreconditionError("cache: entry " + id.ToString() + " is already tuned and as fast (" +
                                   std::to_string(stored->device_seconds) + " s per run, the new one " +
                                   std::to_string(tuned_device_seconds) + " s)")
        .WithReason(std::string(kAlreadyTuned));
  }
  return Ok();
}

}  // namespace

Status CacheStore::ReplaceWithTuned(const PutRequest& tuned, uint64_t expected_checksum) {
  if (tuned.plan_kind != PlanKind::kTuned) {
    return InvalidArgumentError("cache: ReplaceWithTuned takes a tuned executable, not plan kind " +
                                std::string(PlanKindName(tuned.plan_kind)));
  }
  KILN_ASSIGN_OR_RETURN(PreparedEntry prepared, PrepareEntry(tuned));
  uint64_t replaced_stored_bytes = 0;
  auto swap = [&](Connection& writer) -> Status {
    std::optional<StoredVersion> stored;
    {
      // The writer's transaction holds the write lock: no other process
      // can change the row between this read and the write below.
      KILN_ASSIGN_OR_RETURN(Statement select,
                            writer.Prepare("SELECT checksum, plan_kind, device_seconds, stored_bytes, "
                                             "compile_seconds FROM entries "
                                             "WHERE id = ?5 AND tenant = ?1 AND key = ?2 AND chip = ?3 "
                                             "AND format_version = ?4 AND quarantined = 0"));
      select.BindText(1, tuned.id.tenant).BindText(2, tuned.id.key.Hex()).BindText(3, tuned.id.chip);
      select.Bind(4, static_cast<int64_t>(tuned.id.format_version)).Bind(5, EntryRowId(tuned.id));
      KILN_ASSIGN_OR_RETURN(bool found, select.Step());
      if (found) {
        KILN_ASSIGN_OR_RETURN(PlanKind kind, ParsePlanKind(select.ColumnText(1)));
        stored = StoredVersion{ChecksumFromSql(select.ColumnInt(0)), kind, select.ColumnDouble(2),
                               select.ColumnDouble(4)};
        replaced_stored_bytes = static_cast<uint64_t>(select.ColumnInt(3));
      }
    }
    KILN_RETURN_IF_ERROR(CheckReplaceable(tuned.id, stored, expected_checksum, tuned.device_seconds));
    // A hit on the tuned entry saves the compile it replaced, not the
    // tuning run (kept apart as tune_seconds).
    PutRequest kept = tuned;
    kept.compile_seconds = stored->compile_seconds;
    prepared.entry->metadata.compile_seconds = stored->compile_seconds;
    return WriteEntryRows(writer, kept, prepared, /*keep_components=*/true);
  };
  return writer_->Write(swap, [&](Connection& writer) {
    approx_stored_bytes_ -= std::min(approx_stored_bytes_, replaced_stored_bytes);
    PublishEntryLocked(writer, tuned, std::move(prepared.entry));
  });
}

}  // namespace kiln::cache
