-- One filing of each trace by its start instead of three. trace_figures fed three views: the UTC
-- day (trace_cost_days, 008), hour (trace_hours, 019) and minute (trace_minutes, 022) a trace starts
-- in. Since 022 the daily costs are recomputed from minutes and nothing reads trace_cost_days; the
-- `metrics` query's TRACES per minute and part hours read trace_hours, which trace_minutes can
-- answer as well (sorted by minute, so a range reads what it holds) once it carries the columns
-- the trace filters use. Every figures insert of the worker's upkeep wrote three parts more than
-- one (one per view), and a trace whose start moved earlier needed three empty rows: now one.
-- docs/architecture.md, "Daily costs and trace metrics from minutes".

ALTER TABLE trace_minutes
  ADD COLUMN IF NOT EXISTS session_id String AFTER root_name,
  ADD COLUMN IF NOT EXISTS user_id String AFTER session_id,
  ADD COLUMN IF NOT EXISTS run_id String AFTER user_id,
  ADD COLUMN IF NOT EXISTS llm_calls UInt32 AFTER error_count,
  ADD COLUMN IF NOT EXISTS models Array(LowCardinality(String)) AFTER llm_calls;

DROP TABLE IF EXISTS trace_minutes_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_minutes_mv TO trace_minutes AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, start_time,
  duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls,
  models, cost_rows, toUInt8(1) AS present, computed_at, retention_days
FROM trace_figures;

-- Each stored trace's newest figures filed again with the new columns, under the same computed_at:
-- of two rows with one version the one inserted last is kept, so these replace the rows without
-- them, and figures written while the view was being replaced are filed too.
INSERT INTO trace_minutes (tenant_id, project_id, minute, trace_id, start_time, duration_ms, root_name, session_id, user_id, run_id, service_name,
  iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, cost_rows, present, computed_at, retention_days)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC'), trace_id, start_time, duration_ms,
  root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models,
  cost_rows, 1, computed_at, retention_days
FROM trace_figures FINAL
SETTINGS max_partitions_per_insert_block = 0;

DROP TABLE IF EXISTS trace_hours_mv;
DROP TABLE IF EXISTS trace_hours;
DROP TABLE IF EXISTS trace_cost_days_mv;
DROP TABLE IF EXISTS trace_cost_days;
