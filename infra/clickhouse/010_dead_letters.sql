-- Span rows ClickHouse refused, and export jobs that ran out of retries: kept instead of dropped,
-- so an operator can see why (`reason`, `error`) and replay them after a fix (docs/ingest.md).
-- `kind` says what `payload` holds: 'span_row' one JSONEachRow line of `spans` as the worker built
-- it; 'export_job' the queue job of a whole export (its OTLP body, compressed), which a replay runs
-- through the pipeline again; 'accounting_job' a queue job of the gateway's counters (replayed the
-- same way). A replay writes a newer version of the row with `replayed_at` set.
-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS dead_letters (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  id String,
  kind Enum8('span_row' = 1, 'export_job' = 2, 'accounting_job' = 3),
  reason LowCardinality(String),
  error String CODEC(ZSTD(1)),
  export_id String,
  spans UInt32,
  payload String CODEC(ZSTD(3)),
  dead_lettered_at DateTime64(3, 'UTC'),
  replayed_at Nullable(DateTime64(3, 'UTC')),
  version DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(dead_lettered_at)
ORDER BY (tenant_id, project_id, id);
