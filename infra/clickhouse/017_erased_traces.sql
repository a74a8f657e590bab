-- Tombstones of erased traces (eraseData): written before the request is answered, so every read
-- of the API leaves the traces out from then on (the scoped reads' filters, libs/clickhouse
-- project-tables.ts); the worker's erasure job then deletes their rows from every table and
-- recomputes what was summed from them. `whole_session` is 1 when the request erased the trace's
-- whole session (by user or session): the session is left out of the session tables too. Kept
-- after the job (a span of an erased trace that arrives late is still left out); they hold ids only.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS erased_traces (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  session_id String,
  whole_session UInt8,
  job_id String,
  erased_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(erased_at)
ORDER BY (tenant_id, project_id, trace_id);
