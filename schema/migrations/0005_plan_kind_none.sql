-- 0005: plan_kind gains 'none'. Until now an executable compiled with plan
-- none was stored as 'heuristic'; the plan it was compiled with is also in the
-- entry's options (kiln serve writes {"options": {"plan": ...}, ...}, older
-- entries the bare options object), so such rows become 'none'. A row whose
-- options are not JSON or name no plan keeps its kind: nothing tells it apart.
--
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt
-- (SQLite's documented procedure: Migrate runs with foreign keys off and checks
-- them before committing), keeping column order, row ids and every value.
-- Dropping the table drops its triggers; they are recreated as 0004 made them.
-- entry_totals is unchanged: the rows and their sizes are the same.
CREATE TABLE entries_new (
  id               INTEGER PRIMARY KEY,
  tenant           TEXT    NOT NULL,
  key              TEXT    NOT NULL,
  chip             TEXT    NOT NULL,
  format_version   INTEGER NOT NULL,
  options          TEXT    NOT NULL,
  plan_kind        TEXT    NOT NULL CHECK (plan_kind IN ('none', 'heuristic', 'given', 'tuned')),
  raw_bytes        INTEGER NOT NULL,
  stored_bytes     INTEGER NOT NULL,
  checksum         INTEGER NOT NULL,           -- XXH3-64 of the raw executable, as int64
  compile_seconds  REAL    NOT NULL,
  device_seconds   REAL    NOT NULL,           -- estimated device time per run
  created_ms       INTEGER NOT NULL,           -- Unix time, milliseconds
  last_hit_ms      INTEGER NOT NULL,
  hit_count        INTEGER NOT NULL DEFAULT 0,
  quarantined      INTEGER NOT NULL DEFAULT 0,
  dictionary_id    INTEGER NOT NULL DEFAULT 0, -- 0 = compressed without a dictionary
  UNIQUE (tenant, key, chip, format_version)
);

INSERT INTO entries_new (id, tenant, key, chip, format_version, options, plan_kind, raw_bytes,
                         stored_bytes, checksum, compile_seconds, device_seconds, created_ms,
                         last_hit_ms, hit_count, quarantined, dictionary_id)
  SELECT id, tenant, key, chip, format_version, options,
         CASE WHEN plan_kind = 'heuristic' AND
                   (CASE WHEN json_valid(options)
                         THEN coalesce(json_extract(options, '$.options.plan'), json_extract(options, '$.plan'))
                    END) = 'none'
              THEN 'none' ELSE plan_kind END,
         raw_bytes, stored_bytes, checksum, compile_seconds, device_seconds, created_ms,
         last_hit_ms, hit_count, quarantined, dictionary_id
  FROM entries;

DROP TABLE entries;
ALTER TABLE entries_new RENAME TO entries;

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
