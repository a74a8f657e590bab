import { SPAN_SKETCH, hourOf, mergedFigures } from './span-metrics.sql';

/*
 * Trace metrics by the hour (infra/clickhouse/019_trace_metrics_hour.sql; docs/architecture.md,
 * "Trace metrics by the hour"): trace_metrics_hour sums the traces per hour × root name × service
 * × iterations. The worker's upkeep recomputes the minutes its round touched (trace_metrics_minute,
 * from trace_minutes, which files each trace's figures under the UTC minute it starts in: 022, 024)
 * and from them their hours; the erasure job the same for erased traces; the `metrics` query reads
 * each hour's newest computation.
 */

const SCOPE = 'tenant_id = {tenantId:String} AND project_id = {projectId:String}';

/** The figure columns of trace_metrics_hour after its dimensions, in its column order. */
export const TRACE_METRIC_FIGURES = [
  'traces',
  'error_traces',
  'cost_usd',
  'input_tokens',
  'output_tokens',
  'duration_sum_ms',
  'duration_sketch',
] as const;

/**
 * Trace rows (`h`: trace_minutes', present ones) aggregated into the trace metrics'
 * figure columns: each row is one trace. Qualified, so the aliases do not shadow the columns they sum.
 */
export const TRACE_HOUR_AGGREGATES = `count() AS traces, countIf(h.error_count > 0) AS error_traces, sum(h.cost_usd) AS cost_usd,
  sum(h.input_tokens) AS input_tokens, sum(h.output_tokens) AS output_tokens, sum(h.duration_ms) AS duration_sum_ms,
  ${SPAN_SKETCH.replace('(', 'State(')}(h.duration_ms) AS duration_sketch`;

/** A sketch state of no values (the figures of a group no trace holds). */
const EMPTY_SKETCH = `arrayReduce('${SPAN_SKETCH.replace('(', 'State(')}', emptyArrayFloat64())`;

/**
 * Recomputes trace_metrics_minute (022_minute_filings.sql) for the minutes a round touched
 * ({minutes:Array(Int64)}, ms) of one project from trace_minutes, which holds those minutes'
 * traces side by side. Every group already stored for those minutes is written again too, with no
 * traces when none holds it any more (newest wins per group; readers skip groups of no traces).
 */
export const REFRESH_TRACE_METRICS_MINUTE_SQL = `
  INSERT INTO trace_metrics_minute (tenant_id, project_id, minute, root_name, service_name, iterations, traces, error_traces, cost_usd,
    input_tokens, output_tokens, duration_sum_ms, duration_sketch, computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, g.minute, g.root_name, g.service_name, g.iterations, ${mergedFigures(TRACE_METRIC_FIGURES, 'g')},
    now64(6), max(g.retention_days)
  FROM (
    SELECT h.minute AS minute, h.root_name AS root_name, toString(h.service_name) AS service_name, h.iterations AS iterations,
      ${TRACE_HOUR_AGGREGATES}, max(h.retention_days) AS retention_days
    FROM (SELECT * FROM trace_minutes FINAL WHERE ${SCOPE} AND toUnixTimestamp64Milli(minute) IN {minutes:Array(Int64)}) AS h
    WHERE h.present = 1
    GROUP BY h.minute, h.root_name, h.service_name, h.iterations
    UNION ALL
    SELECT minute, root_name, toString(service_name), iterations, 0, 0, 0, 0, 0, 0, ${EMPTY_SKETCH}, retention_days
    FROM trace_metrics_minute FINAL
    WHERE ${SCOPE} AND toUnixTimestamp64Milli(minute) IN {minutes:Array(Int64)}) AS g
  GROUP BY g.minute, g.root_name, g.service_name, g.iterations
  SETTINGS max_partitions_per_insert_block = 0`;

/**
 * Recomputes trace_metrics_hour for some hours ({hours:Array(Int64)}, ms) of one project from their
 * minutes in trace_metrics_minute: at most 60 rows per group, however many traces the hour holds
 * (the minutes must be current: REFRESH_TRACE_METRICS_MINUTE_SQL first). One computation (one
 * computed_at) per statement, with a row of no traces per hour so an hour whose traces all left has
 * a computation too.
 */
export const REFRESH_TRACE_METRICS_HOUR_SQL = `
  INSERT INTO trace_metrics_hour (tenant_id, project_id, hour, root_name, service_name, iterations, traces, error_traces, cost_usd, input_tokens,
    output_tokens, duration_sum_ms, duration_sketch, computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, hour, root_name, service_name, iterations, traces, error_traces, cost_usd, input_tokens,
    output_tokens, duration_sum_ms, duration_sketch, now64(6), retention_days
  FROM (
    SELECT ${hourOf('m.minute')} AS hour, m.root_name AS root_name, toString(m.service_name) AS service_name, m.iterations AS iterations,
      ${mergedFigures(TRACE_METRIC_FIGURES, 'm')}, max(m.retention_days) AS retention_days
    FROM (SELECT * FROM trace_metrics_minute FINAL
          WHERE ${SCOPE} AND intDiv(toUnixTimestamp64Milli(minute), 3600000) * 3600000 IN {hours:Array(Int64)}) AS m
    WHERE m.traces > 0
    GROUP BY hour, m.root_name, m.service_name, m.iterations
    UNION ALL
    SELECT fromUnixTimestamp64Milli(arrayJoin({hours:Array(Int64)}), 'UTC'), '', '', -1, 0, 0, 0, 0, 0, 0, ${EMPTY_SKETCH}, 0)
  SETTINGS max_partitions_per_insert_block = 0`;

const HOURS_IN_RANGE =
  "hour >= fromUnixTimestamp64Milli({rollupFromMs:Int64}, 'UTC') AND hour < fromUnixTimestamp64Milli({rollupToMs:Int64}, 'UTC')";

/**
 * The rows of each hour's newest computation in {rollupFromMs, rollupToMs} (whole hours, ms), the
 * rows of no traces left out. No FINAL: rows of one computation share computed_at.
 */
export const TRACE_METRIC_HOUR_ROWS_SQL = `
  SELECT * FROM trace_metrics_hour
  WHERE ${SCOPE} AND ${HOURS_IN_RANGE} AND traces > 0
    AND (hour, computed_at) IN (SELECT hour, max(computed_at) FROM trace_metrics_hour WHERE ${SCOPE} AND ${HOURS_IN_RANGE} GROUP BY hour)`;
