-- Trace lists over a time range from the minute filing. The traces page, latency by iterations
-- and the cost breakdown of a range read trace_figures FINAL, sorted by trace id: a range there is
-- a read of the whole project, and under steady ingest its latency grows with the project (a
-- dashboard over the last five minutes went from 27 to 80 ms in an hour of load). trace_minutes is
-- sorted by the minute a trace starts in, so a range reads only its minutes; it lacked the trace's
-- end time and tools, which the traces page shows. 025 adds them and files every stored trace again.
-- docs/architecture.md, "Trace lists over a time range".

ALTER TABLE trace_minutes
  ADD COLUMN IF NOT EXISTS end_time DateTime64(9, 'UTC') AFTER start_time,
  ADD COLUMN IF NOT EXISTS tools_used Array(LowCardinality(String)) AFTER models;

DROP TABLE IF EXISTS trace_minutes_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_minutes_mv TO trace_minutes AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC') AS minute, trace_id, start_time,
  end_time, duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count,
  llm_calls, models, tools_used, cost_rows, toUInt8(1) AS present, computed_at, retention_days
FROM trace_figures;

-- Each stored trace's newest figures filed again with the new columns, under the same computed_at:
-- of two rows with one version the one inserted last is kept, so these replace the rows without
-- them, and figures written while the view was being replaced are filed too.
INSERT INTO trace_minutes (tenant_id, project_id, minute, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id,
  service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, present, computed_at,
  retention_days)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(start_time), 60000) * 60, 0, 'UTC'), trace_id, start_time, end_time,
  duration_ms, root_name, session_id, user_id, run_id, service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls,
  models, tools_used, cost_rows, 1, computed_at, retention_days
FROM trace_figures FINAL
SETTINGS max_partitions_per_insert_block = 0;
