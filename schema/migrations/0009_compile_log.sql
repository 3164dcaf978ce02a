-- 0009: one row per program a module name was compiled as, so that a job
-- compiling the same program over and over (a new batch dimension, a new
-- learning-rate constant each time) can be seen: "recompile storms". A
-- compile of (tenant, module name, chip, key) seen before counts again on
-- its row. Bounded: only the newest 100000 rows are kept (the store trims
-- on insert). Kept when the entry is evicted: it is history, not cache.
CREATE TABLE compile_log (
  id               INTEGER PRIMARY KEY,
  tenant           TEXT    NOT NULL,
  module_name      TEXT    NOT NULL,
  chip             TEXT    NOT NULL,
  key              TEXT    NOT NULL,
  client           TEXT    NOT NULL,  -- X-Kiln-Client of the last compile; '' when none
  parameters       TEXT    NOT NULL,  -- JSON array of the entry parameters' shapes
  compiles         INTEGER NOT NULL,
  compile_seconds  REAL    NOT NULL,  -- over all its compiles
  first_ms         INTEGER NOT NULL,
  last_ms          INTEGER NOT NULL,
  UNIQUE (tenant, module_name, chip, key)
);
CREATE INDEX compile_log_by_name ON compile_log (tenant, module_name, chip, first_ms);
