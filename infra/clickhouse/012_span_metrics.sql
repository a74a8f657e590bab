-- Pre-aggregated span figures for the `metrics` query and the span statistics, so a dashboard over
-- a month reads hours and minutes instead of every span. The tables:
--
-- span_facts: each span's narrow facts sorted by its start minute (a view on `spans` writes them).
-- A copy of a span (at-least-once delivery, or the upkeep writing a root again as RUN) collapses on
-- (minute, trace, span), newest row winning, as in `spans`: read with FINAL.
--
-- span_metrics_minute: per minute and (model, provider, type, service, name), counts, sums and
-- DDSketch states of duration and TTFT (relative accuracy 0.5 %), recomputed from span_facts for a
-- whole minute at once by the worker's sealer. Every row of one computation shares `computed_at`;
-- readers keep, per minute, the rows of its newest computation (a group that vanished from a
-- minute, say a root now typed RUN, keeps an older stamp and is left out).
--
-- span_minute_marks: when each minute last received a span row. A minute whose newest computation
-- is older than its mark is read from span_facts instead, so answers never wait for the sealer.
-- span_minute_dirt: the same marks as an append-only log in time order, so the sealer finds the
-- minutes written lately without reading every project's marks; kept two days.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS span_facts (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  trace_id String CODEC(ZSTD(1)),
  span_id String CODEC(ZSTD(1)),
  start_time DateTime64(9, 'UTC') CODEC(Delta, ZSTD(1)),
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service_name LowCardinality(String),
  name LowCardinality(String),
  is_error UInt8,
  -- 0 for a span that only repeats its children's usage: its cost and tokens count nowhere.
  owns_usage UInt8,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  unpriced UInt8,
  duration_ms Float64,
  ttft_ms Nullable(Float64),
  ingested_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (tenant_id, project_id, minute, trace_id, span_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS span_facts_mv TO span_facts AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, span_id, start_time, model, provider,
       toString(span_type) AS span_type, service_name, name, status_code = 'ERROR' AS is_error, 1 - usage_is_aggregate AS owns_usage,
       cost_usd, tokens_input_uncached + tokens_cache_read + tokens_cache_write AS input_tokens, tokens_output + tokens_reasoning AS output_tokens,
       span_type = 'LLM' AND cost_source = 'none' AS unpriced, duration_ns / 1e6 AS duration_ms, ttft_ms, ingested_at
FROM spans;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_minute_marks (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  dirty_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(dirty_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (tenant_id, project_id, minute);

CREATE MATERIALIZED VIEW IF NOT EXISTS span_minute_marks_mv TO span_minute_marks AS
SELECT tenant_id, project_id, minute, max(ingested_at) AS dirty_at FROM span_facts GROUP BY tenant_id, project_id, minute;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_minute_dirt (
  dirty_at DateTime64(3, 'UTC'),
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toDate(dirty_at)
ORDER BY (dirty_at, tenant_id, project_id)
TTL toDate(dirty_at) + 2
SETTINGS ttl_only_drop_parts = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_minute_dirt_mv TO span_minute_dirt AS
SELECT max(ingested_at) AS dirty_at, tenant_id, project_id, minute FROM span_facts GROUP BY tenant_id, project_id, minute;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_metrics_minute (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service_name LowCardinality(String),
  name LowCardinality(String),
  spans UInt64,
  errors UInt64,
  -- Spans that own their usage (the count behind modelStats.calls) and the LLM ones without a price.
  usage_spans UInt64,
  unpriced UInt64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  duration_sum_ms Float64,
  -- Generation time of the spans that own their usage: duration after the first token (modelStats' tokens/s).
  generation_seconds Float64,
  usage_output_tokens UInt64,
  duration_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  ttft_count UInt64,
  ttft_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (tenant_id, project_id, minute, model, provider, span_type, service_name, name);

-- span_metrics_hour: the same figures per hour, merged by the sealer from the hour's minute rows
-- (each minute's newest computation) once the whole hour is older than the seal horizon, so a
-- month reads hours. `min_source_computed_at` is the oldest minute computation it merged: a reader
-- uses an hour only while that is at least as new as every span row of the hour (its marks);
-- `source_computed_at`, the newest, tells the sealer when a minute was computed again since.
-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_metrics_hour (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  hour DateTime64(0, 'UTC'),
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service_name LowCardinality(String),
  name LowCardinality(String),
  spans UInt64,
  errors UInt64,
  usage_spans UInt64,
  unpriced UInt64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  duration_sum_ms Float64,
  generation_seconds Float64,
  usage_output_tokens UInt64,
  duration_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  ttft_count UInt64,
  ttft_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  source_computed_at DateTime64(6, 'UTC'),
  min_source_computed_at DateTime64(6, 'UTC'),
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant_id, project_id, hour, model, provider, span_type, service_name, name);

-- The spans stored before this migration (running it again writes the same rows, which collapse).
INSERT INTO span_facts
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, span_id, start_time, model, provider,
       toString(span_type) AS span_type, service_name, name, status_code = 'ERROR' AS is_error, 1 - usage_is_aggregate AS owns_usage,
       cost_usd, tokens_input_uncached + tokens_cache_read + tokens_cache_write AS input_tokens, tokens_output + tokens_reasoning AS output_tokens,
       span_type = 'LLM' AND cost_source = 'none' AS unpriced, duration_ns / 1e6 AS duration_ms, ttft_ms, ingested_at
FROM spans FINAL;
