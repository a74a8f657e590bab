-- Scalar figures per trace and per session (CONTRACT section 4), one current row each, so the
-- aggregate queries (p99 by iterations, the sessions page, the traces page) read one narrow row
-- per trace or session instead of merging rollup states. The worker recomputes the rows of every
-- trace and session a batch touched from the idempotent rollups, after the batch is stored; the
-- newest computation wins (ReplacingMergeTree on computed_at), and recomputing gives the same
-- figures, so duplicates and retries change nothing. Read with FINAL.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_figures (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  start_time DateTime64(9, 'UTC'),
  end_time DateTime64(9, 'UTC'),
  duration_ms Float64,
  root_name String,
  session_id String,
  user_id String,
  run_id String,
  service_name LowCardinality(String),
  iterations Int64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  error_count UInt32,
  llm_calls UInt32,
  models Array(LowCardinality(String)),
  tools_used Array(LowCardinality(String)),
  -- The trace's spans that own their usage, summed per (model, provider, type, service): what
  -- costBreakdown adds up, one narrow row per trace instead of every span.
  cost_rows Array(Tuple(model LowCardinality(String), provider LowCardinality(String), span_type LowCardinality(String),
    service LowCardinality(String), cost_usd Float64, input_tokens UInt64, output_tokens UInt64, spans UInt32)),
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (tenant_id, project_id, trace_id);

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS session_figures (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  session_id String,
  trace_count UInt32,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  first_seen DateTime64(9, 'UTC'),
  last_seen DateTime64(9, 'UTC'),
  user_id String,
  -- Per score name: how many scores, the sum and the count of numeric (NUMERIC, BOOLEAN) ones.
  -- Recomputed when the session's spans or its feedback change.
  feedback Array(Tuple(name String, count UInt32, sum Float64, numeric UInt32)),
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (tenant_id, project_id, session_id);
