-- 0002: integrity. An entry whose bytes fail their checksum is quarantined
-- (kept for inspection, never served) and counted.
ALTER TABLE entries ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0;

-- Monotonic counters that outlive the process ("quarantined", "evicted").
CREATE TABLE counters (
  name   TEXT PRIMARY KEY,
  value  INTEGER NOT NULL
) WITHOUT ROWID;
