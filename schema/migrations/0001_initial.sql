-- 0001: compiled executables, the request-body map, key components and
-- tuning records. Hashes are 32 lowercase hex digits (Hash128::Hex()).

-- One compiled executable per (tenant, key, chip, compiler format version).
-- The bytes live in `executables`, so that updating an entry's statistics
-- does not rewrite its executable and lookups walk small rows.
-- id is a 63-bit hash of (tenant, key, chip, format_version) (see
-- cache/store_rows.h), so a lookup is one rowid search; lookups also match
-- the four columns, so a hash collision can only fail a put, never serve
-- the wrong entry.
CREATE TABLE entries (
  id               INTEGER PRIMARY KEY,
  tenant           TEXT    NOT NULL,
  key              TEXT    NOT NULL,
  chip             TEXT    NOT NULL,
  format_version   INTEGER NOT NULL,
  options          TEXT    NOT NULL,
  plan_kind        TEXT    NOT NULL CHECK (plan_kind IN ('heuristic', 'tuned', 'given')),
  raw_bytes        INTEGER NOT NULL,
  stored_bytes     INTEGER NOT NULL,
  checksum         INTEGER NOT NULL,           -- XXH3-64 of the raw executable, as int64
  compile_seconds  REAL    NOT NULL,
  device_seconds   REAL    NOT NULL,           -- estimated device time per run
  created_ms       INTEGER NOT NULL,           -- Unix time, milliseconds
  last_hit_ms      INTEGER NOT NULL,
  hit_count        INTEGER NOT NULL DEFAULT 0,
  UNIQUE (tenant, key, chip, format_version)
);

CREATE TABLE executables (
  entry_id  INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
  frame     BLOB    NOT NULL                   -- zstd frame of the raw executable
);

-- Raw request-body hash -> key, so a repeated body skips parsing.
CREATE TABLE request_keys (
  tenant          TEXT    NOT NULL,
  request_hash    TEXT    NOT NULL,
  chip            TEXT    NOT NULL,
  format_version  INTEGER NOT NULL,
  key             TEXT    NOT NULL,
  PRIMARY KEY (tenant, request_hash, chip, format_version)
) WITHOUT ROWID;

-- Per-component sub-hashes of each entry's key ("parameter 0", "entry body"),
-- in rowid order as the fingerprint lists them.
CREATE TABLE key_components (
  entry_id   INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  component  TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  PRIMARY KEY (entry_id, component)
);

-- Autotuning measurements; error is NULL when the run succeeded.
CREATE TABLE tuning_records (
  id                INTEGER PRIMARY KEY,
  workload_key      TEXT    NOT NULL,
  chip              TEXT    NOT NULL,
  plan              TEXT    NOT NULL,
  measured_seconds  REAL,
  error             TEXT,
  created_ms        INTEGER NOT NULL
);
CREATE INDEX tuning_records_by_workload ON tuning_records (workload_key, chip);
