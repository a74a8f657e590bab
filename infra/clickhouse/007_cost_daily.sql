-- Cost per UTC day (of the trace's start) and model, provider, span type and service: what
-- costBreakdown reads when it groups by none but these and its range is whole days. Recomputed by
-- the worker for every day a batch touched, from trace_figures (each span once), newest wins.
-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS cost_daily (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  day Date,
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service LowCardinality(String),
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  spans UInt64,
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(day)
ORDER BY (tenant_id, project_id, day, model, provider, span_type, service);
