-- 0006: tuning records are scoped like entries. A record is keyed by the
-- fingerprint of one kernel's subgraph (workload_key, compiler/hlo/
-- subgraph_fingerprint.h), the chip and the compiler format version it was
-- measured with (base/version.h), and belongs to one tenant (a namespace):
-- a record is never shown to, or reused for, another tenant.
--
-- Rows from before were measured by a compiler whose output may differ from
-- any current one and belong to no tenant: they get compiler_version 0 and
-- tenant '' (no tenant has that name), so they are kept for inspection but
-- never used to start a search.
ALTER TABLE tuning_records ADD COLUMN compiler_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tuning_records ADD COLUMN tenant TEXT NOT NULL DEFAULT '';

-- Lookups name all four; tenant first so that counting and deleting one
-- tenant's records use the same index.
DROP INDEX tuning_records_by_workload;
CREATE INDEX tuning_records_by_scope ON tuning_records (tenant, workload_key, chip, compiler_version);
