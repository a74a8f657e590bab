-- User feedback (scores) on traces or spans, append-only. The client's `id` (or a generated one)
-- is part of the key, so sending the same id twice keeps one score (read with FINAL). Feedback may
-- name a trace that has not arrived yet: it is kept and joins the trace when the trace lands.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS feedback (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  id String,
  span_id String,
  name LowCardinality(String),
  data_type Enum8('NUMERIC' = 1, 'BOOLEAN' = 2, 'CATEGORICAL' = 3, 'TEXT' = 4),
  -- NUMERIC and BOOLEAN (1/0) scores; NULL for CATEGORICAL and TEXT.
  value_number Nullable(Float64),
  -- CATEGORICAL and TEXT scores; the JSON text of the value for the others.
  value_text String CODEC(ZSTD(1)),
  comment String CODEC(ZSTD(3)),
  source LowCardinality(String),
  received_at DateTime64(3, 'UTC') DEFAULT now64(3),
  INDEX idx_name name TYPE set(100) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(received_at)
ORDER BY (tenant_id, project_id, trace_id, id);
