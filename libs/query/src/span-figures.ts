import {
  SEALED_ROWS_SQL,
  SKETCH_LEVEL,
  SPAN_FACT_AGGREGATES,
  SPAN_METRIC_DIMENSIONS,
  SPAN_METRIC_FIGURES,
  SPAN_SKETCH,
  UNSEALED_MINUTES_SQL,
} from '@spanforge/clickhouse';
import { FIRST_STORABLE_MS, LAST_STORABLE_MS } from './query.values';
import { timeRange, traceFilterSql, type TraceFilter } from './trace-filter';

/*
 * Span figures for the metrics query and the span statistics: the minute rollup where it is sealed,
 * span_facts elsewhere (infra/clickhouse/012_span_metrics.sql). Both give rows of
 * span_metrics_minute's shape, which the callers aggregate with sum() and the sketch merges below.
 */

/** A percentile of the merged duration or TTFT sketches (DDSketch: within 0.5 % of the exact value). */
export function sketch(of: 'duration' | 'ttft', level: keyof typeof SKETCH_LEVEL): string {
  return `arrayElement(${SPAN_SKETCH.replace('(', 'Merge(')}(${of}_sketch), ${SKETCH_LEVEL[level]})`;
}

const FIGURES = SPAN_METRIC_FIGURES.join(', ');
const DIMENSIONS = SPAN_METRIC_DIMENSIONS.join(', ');

/**
 * Span figures per (minute, model, provider, type, service, name) over the filter's range, as
 * `t` (the minute) and span_metrics_minute's columns. With a range alone: the sealed rollup for
 * the whole minutes inside it, and span_facts for the minutes not sealed yet and the part minutes
 * at its ends. With trace conditions too: span_facts of the matching traces (the rollup does not
 * know traces).
 */
export function spanFigureRows(filter: TraceFilter): { sql: string; params: Record<string, unknown> } {
  // All time when the filter gives no range: from the first to the last instant the store holds.
  const { from, to } = timeRange(filter);
  const fromMs = from ?? FIRST_STORABLE_MS;
  const toMs = to ?? LAST_STORABLE_MS;
  const traces = traceFilterSql({ ...filter, from: undefined, to: undefined }, { traceStartInRange: false });
  const params: Record<string, unknown> = {
    ...traces.params,
    factsFromMs: fromMs,
    factsToMs: toMs,
    factsMinuteMs: Math.floor(fromMs / 60_000) * 60_000,
  };
  const facts = (minutes: string) => `SELECT minute AS t, ${DIMENSIONS}, ${SPAN_FACT_AGGREGATES}
    FROM span_facts FINAL
    WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
      AND minute >= fromUnixTimestamp64Milli({factsMinuteMs:Int64}, 'UTC') AND minute < fromUnixTimestamp64Milli({factsToMs:Int64}, 'UTC')
      AND start_time >= fromUnixTimestamp64Milli({factsFromMs:Int64}, 'UTC') AND start_time < fromUnixTimestamp64Milli({factsToMs:Int64}, 'UTC')${minutes}
    GROUP BY minute, ${DIMENSIONS}`;
  if (traces.traces) {
    const matching = ` AND trace_id IN (SELECT trace_id FROM (SELECT * FROM trace_figures FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String})${traces.traces})`;
    return { sql: facts(matching), params };
  }
  // The whole minutes inside the range: the rollup answers those.
  const sealFromMs = Math.ceil(fromMs / 60_000) * 60_000;
  const sealToMs = Math.floor(toMs / 60_000) * 60_000;
  if (sealFromMs >= sealToMs) return { sql: facts(''), params };
  params.sealFromMs = sealFromMs;
  params.sealToMs = sealToMs;
  const rawMinutes = ` AND (minute < fromUnixTimestamp64Milli({sealFromMs:Int64}, 'UTC') OR minute >= fromUnixTimestamp64Milli({sealToMs:Int64}, 'UTC') OR minute IN (${UNSEALED_MINUTES_SQL}))`;
  return {
    sql: `SELECT minute AS t, ${DIMENSIONS}, ${FIGURES} FROM (${SEALED_ROWS_SQL})
          UNION ALL ${facts(rawMinutes)}`,
    params,
  };
}
