-- 0010: an entry's tuning time apart from its compile time. A tuned entry
-- replacing a compiled one keeps the compile's seconds (what a hit saves)
-- and records the tuning run's here. Entries tuned before this migration
-- had the tuning run's time written as their compile time; the compile's
-- own was not kept, so both columns hold that time for them (nothing is
-- lost; their saved seconds stay overstated until they are tuned again).
ALTER TABLE entries ADD COLUMN tune_seconds REAL NOT NULL DEFAULT 0;
UPDATE entries SET tune_seconds = compile_seconds WHERE plan_kind = 'tuned';
