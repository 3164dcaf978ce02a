-- 0003: zstd dictionaries trained on executables, and the index that finds
-- entries sharing a key component (explaining a miss).
CREATE TABLE dictionaries (
  id          INTEGER PRIMARY KEY,           -- the zstd dictionary id
  bytes       BLOB    NOT NULL,
  created_ms  INTEGER NOT NULL
);

-- 0 = compressed without a dictionary.
ALTER TABLE entries ADD COLUMN dictionary_id INTEGER NOT NULL DEFAULT 0;

CREATE INDEX key_components_by_hash ON key_components (component, hash);
