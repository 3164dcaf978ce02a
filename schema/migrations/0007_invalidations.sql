-- 0007: a log of entries that were deleted, quarantined or rewritten, so that
-- every process using the store (a server's hot set and hit-path index, a
-- second server on the same file) drops what it holds in memory for them:
-- `kiln inspect evict` or a tuned swap made by another process must not be
-- answered from a stale copy. Written by triggers, so every writer of every
-- process logs in the same transaction as its change, and readers poll it
-- (CacheStore::TakeInvalidations) by sequence number.
CREATE TABLE invalidations (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant          TEXT    NOT NULL,
  key             TEXT    NOT NULL,
  chip            TEXT    NOT NULL,
  format_version  INTEGER NOT NULL
);

CREATE TRIGGER entries_deleted_invalidate AFTER DELETE ON entries
BEGIN
  INSERT INTO invalidations (tenant, key, chip, format_version)
  VALUES (OLD.tenant, OLD.key, OLD.chip, OLD.format_version);
END;

-- What a reader may hold: the bytes (checksum), whether they may be served
-- (quarantined) and what answers carry (plan, estimate, options). Hit
-- statistics are not among them.
CREATE TRIGGER entries_rewritten_invalidate
AFTER UPDATE OF checksum, quarantined, plan_kind, device_seconds, options ON entries
WHEN OLD.checksum IS NOT NEW.checksum OR OLD.quarantined IS NOT NEW.quarantined
  OR OLD.plan_kind IS NOT NEW.plan_kind OR OLD.device_seconds IS NOT NEW.device_seconds
  OR OLD.options IS NOT NEW.options
BEGIN
  INSERT INTO invalidations (tenant, key, chip, format_version)
  VALUES (OLD.tenant, OLD.key, OLD.chip, OLD.format_version);
END;

-- The log keeps its last 65536 rows: a reader that fell further behind
-- sees the gap and drops everything it holds.
CREATE TRIGGER invalidations_bounded AFTER INSERT ON invalidations
WHEN NEW.seq > 65536
BEGIN
  DELETE FROM invalidations WHERE seq <= NEW.seq - 65536;
END;
