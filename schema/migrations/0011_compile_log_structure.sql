-- 0011: a compile-log row's program structure (hlo::StructureHash: the
-- graph of operations without shapes, constants and attributes) and its
-- compile options, so recompile diagnostics group one program's variants
-- (a storm: shapes or constants changing under the same structure) apart
-- from unrelated programs that share a module name, and say when only the
-- options (a topology, a plan) differ. Rows from before read '' for both.
ALTER TABLE compile_log ADD COLUMN structure TEXT NOT NULL DEFAULT '';
ALTER TABLE compile_log ADD COLUMN options TEXT NOT NULL DEFAULT '';
