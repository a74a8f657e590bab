-- Retention by whole parts. Every table of project content gets `retention_days` (the project's
-- retention when the row was written; 0 keeps it) and is partitioned by when its rows expire: a
-- row that is kept sits in the partition of its month, as before; a row under a retention sits in
-- the partition of the week (its Monday) in which it expires. Every row of such a partition
-- expires within that week, so the TTL, with `ttl_only_drop_parts`, drops whole parts once their
-- last row has expired, never rewriting one; the number of partitions follows the weeks of expiry,
-- not the number of projects or retentions. Reads leave expired rows out at once (the scoped
-- reads' filters); storage follows within the week. docs/architecture.md, "Retention in storage".
--
-- A partition key cannot be changed in place, so each table is rebuilt as 013 rebuilt feedback:
-- copied into a staging table of the new form, then exchanged. No project had a retention before
-- this migration (setDataPolicy refused one), so every copied row is kept (0). The materialized
-- views are dropped first and made again at the end with the column; spans written meanwhile by a
-- process not yet restarted, and rows written by its upkeep, come over in the catch-up at the end
-- (copies collapse: every table replaces or merges idempotently), and the spans' catch-up runs
-- through the views again. Each step may run again; a start interrupted anywhere completes on
-- the next start.

DROP TABLE IF EXISTS traces_mv;
DROP TABLE IF EXISTS trace_index_mv;
DROP TABLE IF EXISTS sessions_mv;
DROP TABLE IF EXISTS runs_mv;
DROP TABLE IF EXISTS span_facts_mv;
DROP TABLE IF EXISTS span_minute_marks_mv;
DROP TABLE IF EXISTS trace_cost_days_mv;

DROP TABLE IF EXISTS spans_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS spans_016 (
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
  start_time DateTime64(9, 'UTC') CODEC(Delta(8), ZSTD(1)),
  end_time DateTime64(9, 'UTC') CODEC(Delta(8), ZSTD(1)),
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
  tokens_input_uncached UInt64 CODEC(T64, ZSTD(1)),
  tokens_cache_read UInt64 CODEC(T64, ZSTD(1)),
  tokens_cache_write UInt64 CODEC(T64, ZSTD(1)),
  tokens_output UInt64 CODEC(T64, ZSTD(1)),
  tokens_reasoning UInt64 CODEC(T64, ZSTD(1)),
  input_tokens UInt64 MATERIALIZED (tokens_input_uncached + tokens_cache_read) + tokens_cache_write,
  output_tokens UInt64 MATERIALIZED tokens_output + tokens_reasoning,
  usage_is_aggregate UInt8,
  cost_usd Float64 CODEC(ZSTD(1)),
  cost_source LowCardinality(String),
  price_version LowCardinality(String),
  ttft_ms Nullable(Float64),
  error_type LowCardinality(String),
  iterations Int32 DEFAULT -1,
  attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  attribute_json_keys Array(LowCardinality(String)),
  resource_attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  `events.time` Array(DateTime64(9, 'UTC')),
  `events.name` Array(LowCardinality(String)),
  `events.attributes` Array(Map(LowCardinality(String), String)),
  `links.trace_id` Array(String),
  `links.span_id` Array(String),
  `links.trace_state` Array(String),
  `links.attributes` Array(Map(LowCardinality(String), String)),
  input String CODEC(ZSTD(3)),
  output String CODEC(ZSTD(3)),
  dropped_attributes_count UInt32,
  dropped_events_count UInt32,
  dropped_links_count UInt32,
  truncated UInt8,
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3),
  redactions UInt32 DEFAULT 0 CODEC(ZSTD(1)),
  retention_days UInt16 DEFAULT 0,
  INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_run_id run_id TYPE bloom_filter(0.01) GRANULARITY 4,
  INDEX idx_user_id user_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY if(retention_days = 0, toYYYYMM(start_time), toYYYYMMDD(toMonday(toDate(start_time) + retention_days)))
ORDER BY (tenant_id, project_id, toDate(start_time), trace_id, span_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(start_time, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO spans_016 (tenant_id, project_id, trace_id, span_id, parent_span_id, trace_state, flags, name, kind, service_name, scope_name, scope_version, start_time, end_time, duration_ns, status_code, status_message, span_type, convention, operation, session_id, user_id, run_id, agent_name, tool_name, model, model_requested, provider, tokens_input_uncached, tokens_cache_read, tokens_cache_write, tokens_output, tokens_reasoning, usage_is_aggregate, cost_usd, cost_source, price_version, ttft_ms, error_type, iterations, attributes, attribute_json_keys, resource_attributes, `events.time`, `events.name`, `events.attributes`, `links.trace_id`, `links.span_id`, `links.trace_state`, `links.attributes`, input, output, dropped_attributes_count, dropped_events_count, dropped_links_count, truncated, ingested_at, redactions)
SELECT tenant_id, project_id, trace_id, span_id, parent_span_id, trace_state, flags, name, kind, service_name, scope_name, scope_version, start_time, end_time, duration_ns, status_code, status_message, span_type, convention, operation, session_id, user_id, run_id, agent_name, tool_name, model, model_requested, provider, tokens_input_uncached, tokens_cache_read, tokens_cache_write, tokens_output, tokens_reasoning, usage_is_aggregate, cost_usd, cost_source, price_version, ttft_ms, error_type, iterations, attributes, attribute_json_keys, resource_attributes, `events.time`, `events.name`, `events.attributes`, `links.trace_id`, `links.span_id`, `links.trace_state`, `links.attributes`, input, output, dropped_attributes_count, dropped_events_count, dropped_links_count, truncated, ingested_at, redactions
FROM spans;

EXCHANGE TABLES spans AND spans_016;

-- A no-op on one node; in the cluster form the Distributed `spans` gets the column here.
ALTER TABLE spans ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS span_log_events_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS span_log_events_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String CODEC(ZSTD(1)),
  span_id String CODEC(ZSTD(1)),
  time DateTime64(9, 'UTC') CODEC(Delta(8), ZSTD(1)),
  name LowCardinality(String),
  record_hash UInt64,
  seq UInt32,
  attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
  input String CODEC(ZSTD(3)),
  output String CODEC(ZSTD(3)),
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY if(retention_days = 0, toYYYYMM(time), toYYYYMMDD(toMonday(toDate(time) + retention_days)))
ORDER BY (tenant_id, project_id, trace_id, span_id, time, name, record_hash)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(time, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO span_log_events_016 (tenant_id, project_id, trace_id, span_id, time, name, record_hash, seq, attributes, input, output, ingested_at)
SELECT tenant_id, project_id, trace_id, span_id, time, name, record_hash, seq, attributes, input, output, ingested_at
FROM span_log_events;

EXCHANGE TABLES span_log_events AND span_log_events_016;

-- A no-op on one node; in the cluster form the Distributed `span_log_events` gets the column here.
ALTER TABLE span_log_events ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS span_facts_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_facts_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  trace_id String CODEC(ZSTD(1)),
  span_id String CODEC(ZSTD(1)),
  start_time DateTime64(9, 'UTC') CODEC(Delta(8), ZSTD(1)),
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service_name LowCardinality(String),
  name LowCardinality(String),
  is_error UInt8,
  owns_usage UInt8,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  unpriced UInt8,
  duration_ms Float64,
  ttft_ms Nullable(Float64),
  ingested_at DateTime64(3, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute, trace_id, span_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO span_facts_016 (tenant_id, project_id, minute, trace_id, span_id, start_time, model, provider, span_type, service_name, name, is_error, owns_usage, cost_usd, input_tokens, output_tokens, unpriced, duration_ms, ttft_ms, ingested_at)
SELECT tenant_id, project_id, minute, trace_id, span_id, start_time, model, provider, span_type, service_name, name, is_error, owns_usage, cost_usd, input_tokens, output_tokens, unpriced, duration_ms, ttft_ms, ingested_at
FROM span_facts;

EXCHANGE TABLES span_facts AND span_facts_016;

-- A no-op on one node; in the cluster form the Distributed `span_facts` gets the column here.
ALTER TABLE span_facts ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS span_minute_marks_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_minute_marks_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  dirty_at DateTime64(3, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(dirty_at)
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO span_minute_marks_016 (tenant_id, project_id, minute, dirty_at)
SELECT tenant_id, project_id, minute, dirty_at
FROM span_minute_marks;

EXCHANGE TABLES span_minute_marks AND span_minute_marks_016;

-- A no-op on one node; in the cluster form the Distributed `span_minute_marks` gets the column here.
ALTER TABLE span_minute_marks ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS span_metrics_minute_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_metrics_minute_016 (
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
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute, model, provider, span_type, service_name, name)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO span_metrics_minute_016 (tenant_id, project_id, minute, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, computed_at)
SELECT tenant_id, project_id, minute, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, computed_at
FROM span_metrics_minute;

EXCHANGE TABLES span_metrics_minute AND span_metrics_minute_016;

-- A no-op on one node; in the cluster form the Distributed `span_metrics_minute` gets the column here.
ALTER TABLE span_metrics_minute ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS span_metrics_hour_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_metrics_hour_016 (
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
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(hour), toYYYYMMDD(toMonday(toDate(hour) + retention_days)))
ORDER BY (tenant_id, project_id, hour, model, provider, span_type, service_name, name)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(hour, 'UTC') + toIntervalDay(retention_days) + toIntervalHour(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO span_metrics_hour_016 (tenant_id, project_id, hour, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, source_computed_at, min_source_computed_at, computed_at)
SELECT tenant_id, project_id, hour, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, source_computed_at, min_source_computed_at, computed_at
FROM span_metrics_hour;

EXCHANGE TABLES span_metrics_hour AND span_metrics_hour_016;

-- A no-op on one node; in the cluster form the Distributed `span_metrics_hour` gets the column here.
ALTER TABLE span_metrics_hour ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS traces_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS traces_016 (
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
  llm_spans SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(String, String, UInt8, DateTime64(9, 'UTC')))),
  agent_spans SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(String, String))),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  span_types SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  tools_used SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  models SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64))),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(day), toYYYYMMDD(toMonday(toDate(day) + retention_days)))
ORDER BY (tenant_id, project_id, day, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(day, 'UTC') + toIntervalDay(retention_days) + toIntervalDay(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO traces_016 (tenant_id, project_id, day, trace_id, start_time, end_time, root_span_id, root_name, root_type, root_iterations, service_name, session_id, user_id, run_id, llm_spans, agent_spans, error_span_ids, span_types, tools_used, models, usage)
SELECT tenant_id, project_id, day, trace_id, start_time, end_time, root_span_id, root_name, root_type, root_iterations, service_name, session_id, user_id, run_id, llm_spans, agent_spans, error_span_ids, span_types, tools_used, models, usage
FROM traces;

EXCHANGE TABLES traces AND traces_016;

-- A no-op on one node; in the cluster form the Distributed `traces` gets the column here.
ALTER TABLE traces ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS trace_index_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_index_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  start_time SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  end_time SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  session_id SimpleAggregateFunction(max, String),
  user_id SimpleAggregateFunction(max, String),
  run_id SimpleAggregateFunction(max, String),
  has_sessionless SimpleAggregateFunction(max, UInt8),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(start_time), toYYYYMMDD(toMonday(toDate(start_time) + retention_days)))
ORDER BY (tenant_id, project_id, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(start_time, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO trace_index_016 (tenant_id, project_id, trace_id, start_time, end_time, session_id, user_id, run_id, has_sessionless)
SELECT tenant_id, project_id, trace_id, start_time, end_time, session_id, user_id, run_id, has_sessionless
FROM trace_index;

EXCHANGE TABLES trace_index AND trace_index_016;

-- A no-op on one node; in the cluster form the Distributed `trace_index` gets the column here.
ALTER TABLE trace_index ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS sessions_016;

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS sessions_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  session_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  user_id SimpleAggregateFunction(max, String),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64))),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, session_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO sessions_016 (tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage)
SELECT tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage
FROM sessions;

EXCHANGE TABLES sessions AND sessions_016;

-- A no-op on one node; in the cluster form the Distributed `sessions` gets the column here.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS runs_016;

-- shard by: cityHash64(run_id)
CREATE TABLE IF NOT EXISTS runs_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  run_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, run_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO runs_016 (tenant_id, project_id, run_id, first_seen, last_seen, trace_ids)
SELECT tenant_id, project_id, run_id, first_seen, last_seen, trace_ids
FROM runs;

EXCHANGE TABLES runs AND runs_016;

-- A no-op on one node; in the cluster form the Distributed `runs` gets the column here.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS trace_figures_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_figures_016 (
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
  cost_rows Array(Tuple(model LowCardinality(String), provider LowCardinality(String), span_type LowCardinality(String), service LowCardinality(String), cost_usd Float64, input_tokens UInt64, output_tokens UInt64, spans UInt32)),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(start_time), toYYYYMMDD(toMonday(toDate(start_time) + retention_days)))
ORDER BY (tenant_id, project_id, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(start_time, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO trace_figures_016 (tenant_id, project_id, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, computed_at)
SELECT tenant_id, project_id, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, computed_at
FROM trace_figures;

EXCHANGE TABLES trace_figures AND trace_figures_016;

-- A no-op on one node; in the cluster form the Distributed `trace_figures` gets the column here.
ALTER TABLE trace_figures ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS session_figures_016;

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS session_figures_016 (
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
  feedback Array(Tuple(name String, count UInt32, sum Float64, numeric UInt32)),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, session_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO session_figures_016 (tenant_id, project_id, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at)
SELECT tenant_id, project_id, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at
FROM session_figures;

EXCHANGE TABLES session_figures AND session_figures_016;

-- A no-op on one node; in the cluster form the Distributed `session_figures` gets the column here.
ALTER TABLE session_figures ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS trace_cost_days_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_cost_days_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  day Date,
  trace_id String,
  cost_rows Array(Tuple(model LowCardinality(String), provider LowCardinality(String), span_type LowCardinality(String), service LowCardinality(String), cost_usd Float64, input_tokens UInt64, output_tokens UInt64, spans UInt32)),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(day), toYYYYMMDD(toMonday(toDate(day) + retention_days)))
ORDER BY (tenant_id, project_id, day, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(day, 'UTC') + toIntervalDay(retention_days) + toIntervalDay(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO trace_cost_days_016 (tenant_id, project_id, day, trace_id, cost_rows, computed_at)
SELECT tenant_id, project_id, day, trace_id, cost_rows, computed_at
FROM trace_cost_days;

EXCHANGE TABLES trace_cost_days AND trace_cost_days_016;

-- A no-op on one node; in the cluster form the Distributed `trace_cost_days` gets the column here.
ALTER TABLE trace_cost_days ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS cost_daily_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS cost_daily_016 (
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
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(day), toYYYYMMDD(toMonday(toDate(day) + retention_days)))
ORDER BY (tenant_id, project_id, day, model, provider, span_type, service)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(day, 'UTC') + toIntervalDay(retention_days) + toIntervalDay(1))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO cost_daily_016 (tenant_id, project_id, day, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans, computed_at)
SELECT tenant_id, project_id, day, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans, computed_at
FROM cost_daily;

EXCHANGE TABLES cost_daily AND cost_daily_016;

-- A no-op on one node; in the cluster form the Distributed `cost_daily` gets the column here.
ALTER TABLE cost_daily ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS feedback_016;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS feedback_016 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  id String,
  span_id String,
  name LowCardinality(String),
  data_type Enum8('NUMERIC' = 1, 'BOOLEAN' = 2, 'CATEGORICAL' = 3, 'TEXT' = 4),
  value_number Nullable(Float64),
  value_text String CODEC(ZSTD(1)),
  comment String CODEC(ZSTD(3)),
  source LowCardinality(String),
  received_at DateTime64(3, 'UTC') DEFAULT now64(3),
  updated_at DateTime64(3, 'UTC') DEFAULT received_at,
  retention_days UInt16 DEFAULT 0,
  INDEX idx_name name TYPE set(100) GRANULARITY 4,
  INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(updated_at)
PARTITION BY if(retention_days = 0, toYYYYMM(received_at), toYYYYMMDD(toMonday(toDate(received_at) + retention_days)))
ORDER BY (tenant_id, project_id, trace_id, name, id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(received_at, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO feedback_016 (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at)
SELECT tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at
FROM feedback;

EXCHANGE TABLES feedback AND feedback_016;

-- A no-op on one node; in the cluster form the Distributed `feedback` gets the column here.
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

DROP TABLE IF EXISTS dead_letters_016;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS dead_letters_016 (
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
  version DateTime64(3, 'UTC') DEFAULT now64(3),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY if(retention_days = 0, toYYYYMM(dead_lettered_at), toYYYYMMDD(toMonday(toDate(dead_lettered_at) + retention_days)))
ORDER BY (tenant_id, project_id, id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(dead_lettered_at, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1;

INSERT INTO dead_letters_016 (tenant_id, project_id, id, kind, reason, error, export_id, spans, payload, dead_lettered_at, replayed_at, version)
SELECT tenant_id, project_id, id, kind, reason, error, export_id, spans, payload, dead_lettered_at, replayed_at, version
FROM dead_letters;

EXCHANGE TABLES dead_letters AND dead_letters_016;

-- A no-op on one node; in the cluster form the Distributed `dead_letters` gets the column here.
ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS retention_days UInt16 DEFAULT 0;

-- The views again, as 002, 009 and 012 made them, each row taking the retention of the rows it
-- comes from (a trace's, session's or run's rows of different retentions are merged by readers).
CREATE MATERIALIZED VIEW IF NOT EXISTS traces_mv TO traces AS
SELECT
  tenant_id,
  project_id,
  day,
  trace_id,
  retention_days,
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
GROUP BY tenant_id, project_id, day, trace_id, retention_days;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_index_mv TO trace_index AS
SELECT tenant_id, project_id, trace_id, retention_days, min(span_start) AS start_time, max(span_end) AS end_time,
  max(session_id) AS session_id, max(user_id) AS user_id, max(run_id) AS run_id, max(span_session = '') AS has_sessionless
FROM (SELECT *, start_time AS span_start, end_time AS span_end, session_id AS span_session FROM spans)
GROUP BY tenant_id, project_id, trace_id, retention_days;

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
  tenant_id,
  project_id,
  session_id,
  retention_days,
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
GROUP BY tenant_id, project_id, session_id, retention_days;

CREATE MATERIALIZED VIEW IF NOT EXISTS runs_mv TO runs AS
SELECT tenant_id, project_id, run_id, retention_days, min(span_start) AS first_seen, max(span_end) AS last_seen, groupUniqArray(trace_id) AS trace_ids
FROM (SELECT *, start_time AS span_start, end_time AS span_end FROM spans)
WHERE run_id != ''
GROUP BY tenant_id, project_id, run_id, retention_days;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_facts_mv TO span_facts AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, span_id, start_time, model, provider,
       toString(span_type) AS span_type, service_name, name, status_code = 'ERROR' AS is_error, 1 - usage_is_aggregate AS owns_usage,
       cost_usd, tokens_input_uncached + tokens_cache_read + tokens_cache_write AS input_tokens, tokens_output + tokens_reasoning AS output_tokens,
       span_type = 'LLM' AND cost_source = 'none' AS unpriced, duration_ns / 1e6 AS duration_ms, ttft_ms, ingested_at, retention_days
FROM spans;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_minute_marks_mv TO span_minute_marks AS
SELECT tenant_id, project_id, minute, retention_days, max(ingested_at) AS dirty_at FROM span_facts GROUP BY tenant_id, project_id, minute, retention_days;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_cost_days_mv TO trace_cost_days AS
SELECT tenant_id, project_id, toDate(start_time) AS day, trace_id, cost_rows, computed_at, retention_days
FROM trace_figures;

-- Rows a process not yet restarted wrote to the old tables while they were copied (the last hour
-- of each, by its version column); the spans go through the views again. The rollups the views
-- fill have no catch-up of their own: the spans' brings theirs.
INSERT INTO spans (tenant_id, project_id, trace_id, span_id, parent_span_id, trace_state, flags, name, kind, service_name, scope_name, scope_version, start_time, end_time, duration_ns, status_code, status_message, span_type, convention, operation, session_id, user_id, run_id, agent_name, tool_name, model, model_requested, provider, tokens_input_uncached, tokens_cache_read, tokens_cache_write, tokens_output, tokens_reasoning, usage_is_aggregate, cost_usd, cost_source, price_version, ttft_ms, error_type, iterations, attributes, attribute_json_keys, resource_attributes, `events.time`, `events.name`, `events.attributes`, `links.trace_id`, `links.span_id`, `links.trace_state`, `links.attributes`, input, output, dropped_attributes_count, dropped_events_count, dropped_links_count, truncated, ingested_at, redactions)
SELECT tenant_id, project_id, trace_id, span_id, parent_span_id, trace_state, flags, name, kind, service_name, scope_name, scope_version, start_time, end_time, duration_ns, status_code, status_message, span_type, convention, operation, session_id, user_id, run_id, agent_name, tool_name, model, model_requested, provider, tokens_input_uncached, tokens_cache_read, tokens_cache_write, tokens_output, tokens_reasoning, usage_is_aggregate, cost_usd, cost_source, price_version, ttft_ms, error_type, iterations, attributes, attribute_json_keys, resource_attributes, `events.time`, `events.name`, `events.attributes`, `links.trace_id`, `links.span_id`, `links.trace_state`, `links.attributes`, input, output, dropped_attributes_count, dropped_events_count, dropped_links_count, truncated, ingested_at, redactions
FROM spans_016
WHERE ingested_at >= (SELECT max(ingested_at) FROM spans) - INTERVAL 1 HOUR;

INSERT INTO span_log_events (tenant_id, project_id, trace_id, span_id, time, name, record_hash, seq, attributes, input, output, ingested_at)
SELECT tenant_id, project_id, trace_id, span_id, time, name, record_hash, seq, attributes, input, output, ingested_at
FROM span_log_events_016
WHERE ingested_at >= (SELECT max(ingested_at) FROM span_log_events) - INTERVAL 1 HOUR;

INSERT INTO span_metrics_minute (tenant_id, project_id, minute, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, computed_at)
SELECT tenant_id, project_id, minute, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, computed_at
FROM span_metrics_minute_016
WHERE computed_at >= (SELECT max(computed_at) FROM span_metrics_minute) - INTERVAL 1 HOUR;

INSERT INTO span_metrics_hour (tenant_id, project_id, hour, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, source_computed_at, min_source_computed_at, computed_at)
SELECT tenant_id, project_id, hour, model, provider, span_type, service_name, name, spans, errors, usage_spans, unpriced, cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch, source_computed_at, min_source_computed_at, computed_at
FROM span_metrics_hour_016
WHERE computed_at >= (SELECT max(computed_at) FROM span_metrics_hour) - INTERVAL 1 HOUR;

INSERT INTO trace_figures (tenant_id, project_id, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, computed_at)
SELECT tenant_id, project_id, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, computed_at
FROM trace_figures_016
WHERE computed_at >= (SELECT max(computed_at) FROM trace_figures) - INTERVAL 1 HOUR;

INSERT INTO session_figures (tenant_id, project_id, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at)
SELECT tenant_id, project_id, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at
FROM session_figures_016
WHERE computed_at >= (SELECT max(computed_at) FROM session_figures) - INTERVAL 1 HOUR;

INSERT INTO trace_cost_days (tenant_id, project_id, day, trace_id, cost_rows, computed_at)
SELECT tenant_id, project_id, day, trace_id, cost_rows, computed_at
FROM trace_cost_days_016
WHERE computed_at >= (SELECT max(computed_at) FROM trace_cost_days) - INTERVAL 1 HOUR;

INSERT INTO cost_daily (tenant_id, project_id, day, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans, computed_at)
SELECT tenant_id, project_id, day, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans, computed_at
FROM cost_daily_016
WHERE computed_at >= (SELECT max(computed_at) FROM cost_daily) - INTERVAL 1 HOUR;

INSERT INTO feedback (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at)
SELECT tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at
FROM feedback_016
WHERE updated_at >= (SELECT max(updated_at) FROM feedback) - INTERVAL 1 HOUR;

INSERT INTO dead_letters (tenant_id, project_id, id, kind, reason, error, export_id, spans, payload, dead_lettered_at, replayed_at, version)
SELECT tenant_id, project_id, id, kind, reason, error, export_id, spans, payload, dead_lettered_at, replayed_at, version
FROM dead_letters_016
WHERE version >= (SELECT max(version) FROM dead_letters) - INTERVAL 1 HOUR;

DROP TABLE IF EXISTS spans_016;
DROP TABLE IF EXISTS span_log_events_016;
DROP TABLE IF EXISTS span_facts_016;
DROP TABLE IF EXISTS span_minute_marks_016;
DROP TABLE IF EXISTS span_metrics_minute_016;
DROP TABLE IF EXISTS span_metrics_hour_016;
DROP TABLE IF EXISTS traces_016;
DROP TABLE IF EXISTS trace_index_016;
DROP TABLE IF EXISTS sessions_016;
DROP TABLE IF EXISTS runs_016;
DROP TABLE IF EXISTS trace_figures_016;
DROP TABLE IF EXISTS session_figures_016;
DROP TABLE IF EXISTS trace_cost_days_016;
DROP TABLE IF EXISTS cost_daily_016;
DROP TABLE IF EXISTS feedback_016;
DROP TABLE IF EXISTS dead_letters_016;
