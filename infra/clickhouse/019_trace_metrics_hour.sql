-- Trace metrics by the hour: the `metrics` query's TRACES view reads what its range holds, not the
-- project (trace_figures is sorted by trace id, so a month of a large project was a scan of all of
-- it). Two tables, kept by the worker's upkeep as trace_cost_days and cost_daily are:
--
-- trace_hours: each trace's figures filed under the UTC hour it starts in, sorted by that hour; a
-- view on trace_figures writes it, so it is exactly as fresh as the figures. A trace whose start
-- moves to an earlier hour (a late span that started earlier) gets an empty row (present = 0)
-- under the hour it left. Filtered TRACES metrics read it (range-sized, FINAL), and the hour rollup
-- is computed from it.
--
-- trace_metrics_hour: per hour × root name × service × iterations the traces, error traces, cost,
-- tokens, summed duration and a mergeable DDSketch of durations (relative accuracy 0.5 %, as the
-- span rollup's). The upkeep recomputes the hours a round touched from trace_hours; every
-- computation of an hour writes all of its rows with one computed_at (and a row with no traces,
-- iterations -1, so an hour left empty has a computation too), and readers take each hour's newest
-- computation: a group that no longer occurs in the hour drops out with the computation before.
-- docs/architecture.md, "Trace metrics by the hour".

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_hours (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  hour DateTime64(0, 'UTC'),
  trace_id String,
  start_time DateTime64(9, 'UTC'),
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
  present UInt8 DEFAULT 1,
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(hour), toYYYYMMDD(toMonday(toDate(hour) + retention_days)))
ORDER BY (tenant_id, project_id, hour, trace_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(hour, 'UTC') + toIntervalDay(retention_days) + toIntervalHour(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS trace_metrics_hour (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  hour DateTime64(0, 'UTC'),
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
PARTITION BY if(retention_days = 0, toYYYYMM(hour), toYYYYMMDD(toMonday(toDate(hour) + retention_days)))
ORDER BY (tenant_id, project_id, hour, root_name, service_name, iterations)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(hour, 'UTC') + toIntervalDay(retention_days) + toIntervalHour(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_hours_mv TO trace_hours AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 3600000) * 3600, 0, 'UTC') AS hour, trace_id, start_time,
  duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls,
  models, toUInt8(1) AS present, computed_at, retention_days
FROM trace_figures;

-- What is stored already. Figures the upkeep writes meanwhile go through the view, and a copy of a
-- trace's figures is replaced by the newer one (the newest computed_at wins).
INSERT INTO trace_hours (tenant_id, project_id, hour, trace_id, start_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations,
  cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, present, computed_at, retention_days)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 3600000) * 3600, 0, 'UTC'), trace_id, start_time, duration_ms,
  root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, 1,
  computed_at, retention_days
FROM trace_figures FINAL
SETTINGS max_partitions_per_insert_block = 0;

INSERT INTO trace_metrics_hour (tenant_id, project_id, hour, root_name, service_name, iterations, traces, error_traces, cost_usd, input_tokens,
  output_tokens, duration_sum_ms, duration_sketch, computed_at, retention_days)
SELECT tenant_id, project_id, hour, root_name, service_name, iterations, count(), countIf(error_count > 0), sum(cost_usd), sum(input_tokens),
  sum(output_tokens), sum(duration_ms), quantilesDDState(0.005, 0.5, 0.95, 0.99)(duration_ms), now64(6), max(retention_days)
FROM trace_hours FINAL
WHERE present = 1
GROUP BY tenant_id, project_id, hour, root_name, service_name, iterations
SETTINGS max_partitions_per_insert_block = 0;
