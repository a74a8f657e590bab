-- Each trace's cost rows (trace_figures.cost_rows) filed under the UTC day the trace starts on and
-- sorted by day, so the worker recomputes a day of cost_daily from what that day holds instead of
-- filtering every trace of the project (trace_figures is sorted by trace id).
-- A view on trace_figures writes the row of the trace's start day. A start only moves earlier as
-- spans arrive: when it moves to another day, the worker also writes an empty row (no cost rows)
-- under the day the trace was filed under before, and recomputes both days. Newest wins
-- (ReplacingMergeTree on computed_at). Read with FINAL.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS trace_cost_days (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  day Date,
  trace_id String,
  cost_rows Array(Tuple(model LowCardinality(String), provider LowCardinality(String), span_type LowCardinality(String),
    service LowCardinality(String), cost_usd Float64, input_tokens UInt64, output_tokens UInt64, spans UInt32)),
  computed_at DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(day)
ORDER BY (tenant_id, project_id, day, trace_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_cost_days_mv TO trace_cost_days AS
SELECT tenant_id, project_id, toDate(start_time) AS day, trace_id, cost_rows, computed_at
FROM trace_figures;

-- The traces stored before this migration (running it again writes the same rows, which replace themselves).
INSERT INTO trace_cost_days (tenant_id, project_id, day, trace_id, cost_rows, computed_at)
SELECT tenant_id, project_id, toDate(start_time) AS day, trace_id, cost_rows, computed_at
FROM trace_figures FINAL;
