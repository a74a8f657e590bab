-- Every span, normalised, one row per (project, span). Delivery is at-least-once, so a span may be
-- inserted more than once: ReplacingMergeTree collapses copies on merge and readers use FINAL (or
-- the idempotent rollups below), so a duplicate never changes a count, a sum or a percentile.
-- Sort key serves the three access paths: a project's time range (tenant, project, day), a trace by
-- id within its days (the trace_index table gives them), a session (bloom filter + sessions rollup).
-- Message contents (input/output) and attribute maps are separate columns: hot scans never read them.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS spans (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String CODEC(ZSTD(1)),
  span_id String CODEC(ZSTD(1)),
  parent_span_id String CODEC(ZSTD(1)),
  trace_state String CODEC(ZSTD(1)),
  flags UInt32 CODEC(ZSTD(1)),
  name LowCardinality(String) CODEC(ZSTD(1)),
  kind Enum8('UNSPECIFIED' = 0, 'INTERNAL' = 1, 'SERVER' = 2, 'CLIENT' = 3, 'PRODUCER' = 4, 'CONSUMER' = 5),
  service_name LowCardinality(String) CODEC(ZSTD(1)),
  scope_name LowCardinality(String) CODEC(ZSTD(1)),
  scope_version LowCardinality(String) CODEC(ZSTD(1)),
  start_time DateTime64(9, 'UTC') CODEC(Delta, ZSTD(1)),
  end_time DateTime64(9, 'UTC') CODEC(Delta, ZSTD(1)),
  duration_ns UInt64 CODEC(T64, ZSTD(1)),
  status_code Enum8('UNSET' = 0, 'OK' = 1, 'ERROR' = 2),
  status_message String CODEC(ZSTD(1)),
  span_type Enum8('RUN' = 1, 'AGENT' = 2, 'LLM' = 3, 'TOOL' = 4, 'RETRIEVAL' = 5, 'EMBEDDING' = 6, 'RERANK' = 7, 'GUARDRAIL' = 8, 'EVALUATION' = 9, 'CHAIN' = 10, 'HTTP' = 11, 'DB' = 12, 'OTHER' = 13),
  convention LowCardinality(String),
  operation LowCardinality(String),
  session_id String CODEC(ZSTD(1)),
  user_id String CODEC(ZSTD(1)),
  run_id String CODEC(ZSTD(1)),
  agent_name LowCardinality(String),
  tool_name LowCardinality(String),
  model LowCardinality(String),
  model_requested LowCardinality(String),
  provider LowCardinality(String),
  -- Exclusive token buckets (see libs/semconv UsageBuckets): input_tokens = uncached + cache read + cache write.
  tokens_input_uncached UInt64 CODEC(T64, ZSTD(1)),
  tokens_cache_read UInt64 CODEC(T64, ZSTD(1)),
  tokens_cache_write UInt64 CODEC(T64, ZSTD(1)),
  tokens_output UInt64 CODEC(T64, ZSTD(1)),
  tokens_reasoning UInt64 CODEC(T64, ZSTD(1)),
  input_tokens UInt64 MATERIALIZED tokens_input_uncached + tokens_cache_read + tokens_cache_write,
  output_tokens UInt64 MATERIALIZED tokens_output + tokens_reasoning,
  -- 1 when the span only repeats its children's usage (agent or wrapper totals): excluded from every sum.
  usage_is_aggregate UInt8,
  cost_usd Float64 CODEC(ZSTD(1)),
  cost_source LowCardinality(String),
  price_version LowCardinality(String),
  ttft_ms Nullable(Float64),
  error_type LowCardinality(String),
  -- agent.iterations as stated on the span; -1 when absent.
  iterations Int32 DEFAULT -1,
  -- Values as strings; keys listed in attribute_json_keys hold JSON (numbers, booleans, arrays, maps).
  attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  attribute_json_keys Array(LowCardinality(String)),
  resource_attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  events Nested(time DateTime64(9, 'UTC'), name LowCardinality(String), attributes Map(LowCardinality(String), String)),
  links Nested(trace_id String, span_id String, trace_state String, attributes Map(LowCardinality(String), String)),
  input String CODEC(ZSTD(3)),
  output String CODEC(ZSTD(3)),
  dropped_attributes_count UInt32,
  dropped_events_count UInt32,
  dropped_links_count UInt32,
  truncated UInt8,
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3),
  INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_run_id run_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_user_id user_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant_id, project_id, toDate(start_time), trace_id, span_id)
SETTINGS index_granularity = 8192;

-- Per-trace rollup, maintained from every span insert in any order and any number of exports. Every
-- column is an idempotent aggregate (min, max, set union, max per span id), so duplicate spans
-- change nothing. Rows of one trace merge on (tenant, project, day, trace_id); a trace crossing
-- midnight has a row per day, so readers GROUP BY trace_id (never FINAL) and widen the day filter.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS traces (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  day Date,
  trace_id String,
  start_time SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  end_time SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  root_span_id SimpleAggregateFunction(max, String),
  root_name SimpleAggregateFunction(max, String),
  root_type SimpleAggregateFunction(max, String),
  root_iterations SimpleAggregateFunction(max, Nullable(Int32)),
  service_name SimpleAggregateFunction(max, String),
  session_id SimpleAggregateFunction(max, String),
  user_id SimpleAggregateFunction(max, String),
  run_id SimpleAggregateFunction(max, String),
  -- (span_id, parent_span_id, status is ERROR, start) of every LLM span: LLM calls, retries, iterations.
  llm_spans SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(String, String, UInt8, DateTime64(9, 'UTC')))),
  -- (span_id, parent_span_id) of every AGENT span: iterations are the AGENT children of the root.
  agent_spans SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(String, String))),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  span_types SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  tools_used SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  models SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  -- span_id → (cost, uncached input, cache read, cache write, output, reasoning) of counted spans.
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (tenant_id, project_id, day, trace_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS traces_mv TO traces AS
SELECT
  tenant_id,
  project_id,
  day,
  trace_id,
  min(span_start) AS start_time,
  max(span_end) AS end_time,
  maxIf(span_id, parent_span_id = '') AS root_span_id,
  maxIf(toString(name), parent_span_id = '') AS root_name,
  maxIf(toString(span_type), parent_span_id = '') AS root_type,
  maxIf(if(iterations >= 0, toNullable(iterations), NULL), parent_span_id = '') AS root_iterations,
  max(toString(service_name)) AS service_name,
  max(session_id) AS session_id,
  max(user_id) AS user_id,
  max(run_id) AS run_id,
  groupUniqArrayIf((span_id, parent_span_id, toUInt8(status_code = 'ERROR'), span_start), span_type = 'LLM') AS llm_spans,
  groupUniqArrayIf((span_id, parent_span_id), span_type = 'AGENT') AS agent_spans,
  groupUniqArrayIf(span_id, status_code = 'ERROR') AS error_span_ids,
  groupUniqArray(toString(span_type)) AS span_types,
  groupUniqArrayIf(toString(tool_name), tool_name != '') AS tools_used,
  groupUniqArrayIf(toString(model), model != '') AS models,
  maxMapIf(
    ([span_id], [cost_usd], [tokens_input_uncached], [tokens_cache_read], [tokens_cache_write], [tokens_output], [tokens_reasoning]),
    usage_is_aggregate = 0 AND (cost_usd > 0 OR tokens_input_uncached + tokens_cache_read + tokens_cache_write + tokens_output + tokens_reasoning > 0)
  ) AS usage
-- Renamed in a subquery: the output aliases start_time/end_time would otherwise shadow the span columns.
FROM (SELECT *, toDate(start_time) AS day, start_time AS span_start, end_time AS span_end FROM spans)
GROUP BY tenant_id, project_id, day, trace_id;

-- Point lookups by trace id (its time bounds, so the spans of a trace are read from their days only),
-- and the trace → session / user / run mapping the worker uses to attribute late spans.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_index (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  start_time SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  end_time SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  session_id SimpleAggregateFunction(max, String),
  user_id SimpleAggregateFunction(max, String),
  run_id SimpleAggregateFunction(max, String),
  -- 1 once any span of the trace was stored without a session: the worker back-fills only then.
  has_sessionless SimpleAggregateFunction(max, UInt8)
)
ENGINE = AggregatingMergeTree
ORDER BY (tenant_id, project_id, trace_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_index_mv TO trace_index AS
SELECT tenant_id, project_id, trace_id, min(span_start) AS start_time, max(span_end) AS end_time,
  max(session_id) AS session_id, max(user_id) AS user_id, max(run_id) AS run_id, max(span_session = '') AS has_sessionless
FROM (SELECT *, start_time AS span_start, end_time AS span_end, session_id AS span_session FROM spans)
GROUP BY tenant_id, project_id, trace_id;

-- Per-session rollup from the spans that carry the session (the worker gives a trace's session to all
-- of its spans, late ones included). Usage is keyed by span id, so duplicates add nothing.
-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS sessions (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  session_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  user_id SimpleAggregateFunction(max, String),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
ORDER BY (tenant_id, project_id, session_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
  tenant_id,
  project_id,
  session_id,
  min(span_start) AS first_seen,
  max(span_end) AS last_seen,
  max(user_id) AS user_id,
  groupUniqArray(trace_id) AS trace_ids,
  groupUniqArrayIf(span_id, status_code = 'ERROR') AS error_span_ids,
  maxMapIf(
    ([span_id], [cost_usd], [tokens_input_uncached], [tokens_cache_read], [tokens_cache_write], [tokens_output], [tokens_reasoning]),
    usage_is_aggregate = 0 AND (cost_usd > 0 OR tokens_input_uncached + tokens_cache_read + tokens_cache_write + tokens_output + tokens_reasoning > 0)
  ) AS usage
FROM (SELECT *, start_time AS span_start, end_time AS span_end FROM spans)
WHERE session_id != ''
GROUP BY tenant_id, project_id, session_id;

-- Run index: the traces of one run (an application-level run id spanning traces).
-- shard by: cityHash64(run_id)
CREATE TABLE IF NOT EXISTS runs (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  run_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String))
)
ENGINE = AggregatingMergeTree
ORDER BY (tenant_id, project_id, run_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS runs_mv TO runs AS
SELECT tenant_id, project_id, run_id, min(span_start) AS first_seen, max(span_end) AS last_seen, groupUniqArray(trace_id) AS trace_ids
FROM (SELECT *, start_time AS span_start, end_time AS span_end FROM spans)
WHERE run_id != ''
GROUP BY tenant_id, project_id, run_id;
