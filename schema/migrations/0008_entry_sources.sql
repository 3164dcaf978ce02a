-- 0008: the HLO text each entry was compiled from (a zstd frame without a
-- dictionary), so that explaining a miss can point at the instruction that
-- changed and show the cached value beside the new one. Optional: entries
-- from before this migration, from bundles or from tools that do not pass
-- the text have none. Deleted with its entry.
CREATE TABLE entry_sources (
  entry_id   INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
  raw_bytes  INTEGER NOT NULL,
  frame      BLOB    NOT NULL
);
