-- Daily costs and hourly trace metrics from minutes, so that the worker's upkeep reads what its
-- round touched, not the whole day or hour. Until now each round recomputed cost_daily from every
-- trace of the days it touched (trace_cost_days) and trace_metrics_hour from every trace of the
-- hours (trace_hours): under steady ingest that grows with the day, and a day of a busy project is
-- a million traces read per round. Now:
--
-- trace_minutes: each trace's figures and cost rows filed under the UTC minute it starts in, sorted
-- by that minute; a view on trace_figures writes it, as for trace_hours. A trace whose start moves
-- to an earlier minute gets an empty row (present = 0, no cost rows) under the minute it left.
--
-- cost_minute: cost_daily's figures per minute of the traces' starts. trace_metrics_minute:
-- trace_metrics_hour's figures per minute (with mergeable DDSketch states). The upkeep recomputes
-- the minutes a round touched from trace_minutes (a few hundred traces), then each touched day of
-- cost_daily from its minutes' rows and each touched hour of trace_metrics_hour from its minutes'
-- rows: at most 1,440 and 60 minutes of rows per group, however many traces the day holds.
-- Both minute tables keep one row per key, newest wins (read with FINAL); a recomputation writes
-- every key already stored for its minutes again, at zero when no trace holds it any more.
-- docs/architecture.md, "Daily costs and trace metrics from minutes".

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_minutes (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  trace_id String,
  start_time DateTime64(9, 'UTC'),
  duration_ms Float64,
  root_name String,
  service_name LowCardinality(String),
  iterations Int64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  error_count UInt32,
  cost_rows Array(Tuple(model LowCardinality(String), provider LowCardinality(String), span_type LowCardinality(String), service LowCardinality(String), cost_usd Float64, input_tokens UInt64, output_tokens UInt64, spans UInt32)),
  present UInt8 DEFAULT 1,
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS cost_minute (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
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
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute, model, provider, span_type, service)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS trace_metrics_minute (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  root_name String,
  service_name LowCardinality(String),
  iterations Int64,
  traces UInt64,
  error_traces UInt64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  duration_sum_ms Float64,
  duration_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(minute), toYYYYMMDD(toMonday(toDate(minute) + retention_days)))
ORDER BY (tenant_id, project_id, minute, root_name, service_name, iterations)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(minute, 'UTC') + toIntervalDay(retention_days) + toIntervalMinute(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_minutes_mv TO trace_minutes AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, start_time,
  duration_ms, root_name, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, cost_rows, toUInt8(1) AS present,
  computed_at, retention_days
FROM trace_figures;

-- What is stored already. Figures the upkeep writes meanwhile go through the view, and a copy of a
-- trace's figures is replaced by the newer one (the newest computed_at wins).
INSERT INTO trace_minutes (tenant_id, project_id, minute, trace_id, start_time, duration_ms, root_name, service_name, iterations, cost_usd,
  input_tokens, output_tokens, error_count, cost_rows, present, computed_at, retention_days)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC'), trace_id, start_time, duration_ms,
  root_name, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, cost_rows, 1, computed_at, retention_days
FROM trace_figures FINAL
SETTINGS max_partitions_per_insert_block = 0;

INSERT INTO cost_minute (tenant_id, project_id, minute, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans, computed_at,
  retention_days)
SELECT tenant_id, project_id, minute, toString(r.model) AS model, toString(r.provider) AS provider, toString(r.span_type) AS span_type,
  toString(r.service) AS service, sum(toFloat64(r.cost_usd)), sum(toUInt64(r.input_tokens)), sum(toUInt64(r.output_tokens)), sum(toUInt64(r.spans)),
  now64(6), max(retention_days)
FROM (SELECT * FROM trace_minutes FINAL) ARRAY JOIN cost_rows AS r
GROUP BY tenant_id, project_id, minute, model, provider, span_type, service
SETTINGS max_partitions_per_insert_block = 0;

INSERT INTO trace_metrics_minute (tenant_id, project_id, minute, root_name, service_name, iterations, traces, error_traces, cost_usd, input_tokens,
  output_tokens, duration_sum_ms, duration_sketch, computed_at, retention_days)
SELECT tenant_id, project_id, minute, root_name, service_name, iterations, count(), countIf(error_count > 0), sum(cost_usd), sum(input_tokens),
  sum(output_tokens), sum(duration_ms), quantilesDDState(0.005, 0.5, 0.95, 0.99)(duration_ms), now64(6), max(retention_days)
FROM (SELECT * FROM trace_minutes FINAL)
WHERE present = 1
GROUP BY tenant_id, project_id, minute, root_name, service_name, iterations
SETTINGS max_partitions_per_insert_block = 0;
