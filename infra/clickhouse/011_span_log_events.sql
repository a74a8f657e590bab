-- GenAI events that arrive as OTLP log records (the OpenAI instrumentations send a call's prompts
-- and completions this way, apart from its span), one row per record. They are kept apart from
-- `spans` and joined to their span when its contents are read, so a span and its events may
-- arrive in either order and in any exports. `input` and `output` hold the record's messages as a
-- JSON array in the GenAI messages schema (libs/semconv genai-events.ts), '' when it has none;
-- `attributes` its other facts. Copies of a record (at-least-once delivery) collapse: the sort key
-- ends with a hash of the record's content. `seq` (its place in its export) orders records sent in
-- the same nanosecond.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS span_log_events (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String CODEC(ZSTD(1)),
  span_id String CODEC(ZSTD(1)),
  time DateTime64(9, 'UTC') CODEC(Delta, ZSTD(1)),
  name LowCardinality(String),
  record_hash UInt64,
  seq UInt32,
  attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  input String CODEC(ZSTD(3)),
  output String CODEC(ZSTD(3)),
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(time)
ORDER BY (tenant_id, project_id, trace_id, span_id, time, name, record_hash);
