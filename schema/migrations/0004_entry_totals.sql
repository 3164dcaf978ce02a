-- 0004: running totals of the entries table per (tenant, chip, quarantined),
-- so statistics read a few rows instead of scanning every entry. Triggers
-- keep them in the same transaction as each insert, update and delete of an
-- entry, so they stay exact after a crash (a rolled-back write rolls its
-- totals back too) and whichever process writes the file (kiln serve,
-- kiln inspect evict). Hit counts are not totalled: they change on every
-- flush of hit statistics and are advisory.
CREATE TABLE entry_totals (
  tenant        TEXT    NOT NULL,
  chip          TEXT    NOT NULL,
  quarantined   INTEGER NOT NULL,
  entries       INTEGER NOT NULL,
  raw_bytes     INTEGER NOT NULL,
  stored_bytes  INTEGER NOT NULL,
  PRIMARY KEY (tenant, chip, quarantined)
) WITHOUT ROWID;

INSERT INTO entry_totals (tenant, chip, quarantined, entries, raw_bytes, stored_bytes)
  SELECT tenant, chip, quarantined, count(*), sum(raw_bytes), sum(stored_bytes)
  FROM entries GROUP BY tenant, chip, quarantined;

CREATE TRIGGER entry_totals_after_insert AFTER INSERT ON entries BEGIN
  INSERT INTO entry_totals (tenant, chip, quarantined, entries, raw_bytes, stored_bytes)
    VALUES (NEW.tenant, NEW.chip, NEW.quarantined, 1, NEW.raw_bytes, NEW.stored_bytes)
    ON CONFLICT (tenant, chip, quarantined) DO UPDATE SET entries = entries + 1,
      raw_bytes = raw_bytes + excluded.raw_bytes, stored_bytes = stored_bytes + excluded.stored_bytes;
END;

CREATE TRIGGER entry_totals_after_delete AFTER DELETE ON entries BEGIN
  UPDATE entry_totals SET entries = entries - 1, raw_bytes = raw_bytes - OLD.raw_bytes,
      stored_bytes = stored_bytes - OLD.stored_bytes
    WHERE tenant = OLD.tenant AND chip = OLD.chip AND quarantined = OLD.quarantined;
  DELETE FROM entry_totals
    WHERE tenant = OLD.tenant AND chip = OLD.chip AND quarantined = OLD.quarantined AND entries = 0;
END;

-- Only the totalled columns: flushing hit counts does not fire it.
CREATE TRIGGER entry_totals_after_update
  AFTER UPDATE OF tenant, chip, quarantined, raw_bytes, stored_bytes ON entries BEGIN
  UPDATE entry_totals SET entries = entries - 1, raw_bytes = raw_bytes - OLD.raw_bytes,
      stored_bytes = stored_bytes - OLD.stored_bytes
    WHERE tenant = OLD.tenant AND chip = OLD.chip AND quarantined = OLD.quarantined;
  DELETE FROM entry_totals
    WHERE tenant = OLD.tenant AND chip = OLD.chip AND quarantined = OLD.quarantined AND entries = 0;
  INSERT INTO entry_totals (tenant, chip, quarantined, entries, raw_bytes, stored_bytes)
    VALUES (NEW.tenant, NEW.chip, NEW.quarantined, 1, NEW.raw_bytes, NEW.stored_bytes)
    ON CONFLICT (tenant, chip, quarantined) DO UPDATE SET entries = entries + 1,
      raw_bytes = raw_bytes + excluded.raw_bytes, stored_bytes = stored_bytes + excluded.stored_bytes;
END;
