-- 008 was changed after it landed: data directories that applied its first text (5d9240b) have a
-- view writing one row for every day a trace spans (empty ones after the start day). This puts the
-- view 008 now describes in every directory: the trace's start day only, the worker emptying a day
-- the trace leaves. The empty rows the old view wrote carry no cost and stay harmless.
-- Re-created at start-up, before any worker writes (a directory that already has this view gets
-- the same one back).
DROP TABLE IF EXISTS trace_cost_days_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_cost_days_mv TO trace_cost_days AS
SELECT tenant_id, project_id, toDate(start_time) AS day, trace_id, cost_rows, computed_at
FROM trace_figures;
