import {
  COARSE_CURRENT_HOUR_ROWS_SQL,
  COARSE_HOURS_WITH_DATA_SQL,
  HOURS_WITH_DATA_SQL,
  CURRENT_HOUR_ROWS_SQL,
  SKETCH_LEVEL,
  SPAN_FACT_AGGREGATES,
  SPAN_METRIC_DIMENSIONS,
  SPAN_METRIC_FIGURES,
  sketchPercentile,
  hourOf,
  sealedMinuteRowsSql,
  unsealedMinutesSql,
  type MinuteCondition,
} from '@spanforge/clickhouse';
import { FIRST_STORABLE_MS, LAST_STORABLE_MS } from './query.values';
import type { ScopedClickHouse } from './scoped-clickhouse';
import { timeRange, traceFilterSql, type TraceFilter } from './trace-filter';

/*
 * Span figures for the metrics query and the span statistics, from the span metrics rollup
 * (infra/clickhouse/012_span_metrics.sql; docs/architecture.md "Span metrics rollup"): hour rows
 * where they are current, minute rows where those are sealed, span_facts for the rest. Every part
 * gives rows of span_metrics_minute's shape, which the callers aggregate with sum() and the
 * sketch merges below.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Past this many stale hours to read minute by minute, they are picked by a NOT IN on the current ones instead of as ranges. */
const MAX_HOUR_RANGES = 48;

/** A percentile of the merged duration or TTFT sketches (DDSketch: within 0.5 % of the exact value). */
export function sketch(of: 'duration' | 'ttft', level: keyof typeof SKETCH_LEVEL): string {
  return sketchPercentile('Merge', `${of}_sketch`, level);
}

const FIGURES = SPAN_METRIC_FIGURES.join(', ');
const DIMENSIONS = SPAN_METRIC_DIMENSIONS.join(', ');
/** The dimensions as the coarse hour rollup answers them: every one but the name, which is ''. */
const COARSE_DIMENSIONS = SPAN_METRIC_DIMENSIONS.map((d) => (d === 'name' ? "'' AS name" : d)).join(', ');

const at = (name: string) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`;

/**
 * Span figures per (minute or hour, model, provider, type, service, name) over the filter's range,
 * as `t` and span_metrics_minute's columns. With a range alone: the hour rows of the whole hours
 * inside it that are current (unless `hours` is false: a caller bucketing by minute, or by the
 * local hours of a zone offset by a part hour), the sealed minute rows of the other whole minutes,
 * and span_facts for the minutes not sealed yet and the part minutes at its ends. With trace
 * conditions too: span_facts of the matching traces (the rollup does not know traces). Looks up
 * which hours are current first (one small read), so the rest reads only what it needs.
 */
export async function spanFigureRows(
  db: ScopedClickHouse,
  filter: TraceFilter,
  options: { hours: boolean; names?: boolean } = { hours: true },
): Promise<{ sql: string; params: Record<string, unknown> }> {
  // All time when the filter gives no range: from the first to the last instant the store holds.
  const { from, to } = timeRange(filter);
  const fromMs = from ?? FIRST_STORABLE_MS;
  const toMs = to ?? LAST_STORABLE_MS;
  const traces = traceFilterSql({ ...filter, from: undefined, to: undefined }, { traceStartInRange: false });
  const params: Record<string, unknown> = {
    ...traces.params,
    factsFromMs: fromMs,
    factsToMs: toMs,
    factsMinuteMs: Math.floor(fromMs / MINUTE_MS) * MINUTE_MS,
  };
  const facts = (minutes: string) => `SELECT minute AS t, ${DIMENSIONS}, ${SPAN_FACT_AGGREGATES}
    FROM span_facts FINAL
    WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
      AND minute >= ${at('factsMinuteMs')} AND minute < ${at('factsToMs')}
      AND start_time >= ${at('factsFromMs')} AND start_time < ${at('factsToMs')}${minutes}
    GROUP BY minute, ${DIMENSIONS}`;
  if (traces.traces) {
    const matching = ` AND trace_id IN (SELECT trace_id FROM ${traces.figures}${traces.traces})`;
    return { sql: facts(matching), params };
  }
  // The whole minutes inside the range: the rollup answers those, the facts the part minutes at the ends.
  const sealFromMs = Math.ceil(fromMs / MINUTE_MS) * MINUTE_MS;
  const sealToMs = Math.floor(toMs / MINUTE_MS) * MINUTE_MS;
  if (sealFromMs >= sealToMs) return { sql: facts(''), params };
  params.sealFromMs = sealFromMs;
  params.sealToMs = sealToMs;
  const outsideSealed = (column: string) => `${column} < ${at('sealFromMs')} OR ${column} >= ${at('sealToMs')}`;

  const hourFromMs = Math.ceil(sealFromMs / HOUR_MS) * HOUR_MS;
  const hourToMs = Math.floor(sealToMs / HOUR_MS) * HOUR_MS;
  // Without names asked for, the hour rows come from the rollup without them (name '' in the rows).
  const coarse = !options.names;
  const hours = options.hours && hourFromMs < hourToMs ? await hoursWithData(db, hourFromMs, hourToMs, coarse) : { current: [], stale: [] };
  // The whole minutes the hour rows do not answer: the part hours at the ends, and the hours with span rows that are not current.
  let minutes: MinuteCondition = (column) => `${column} >= ${at('sealFromMs')} AND ${column} < ${at('sealToMs')}`;
  if (hours.current.length > 0) {
    params.currentHoursMs = hours.current;
    params.hourFromMs = hourFromMs;
    params.hourToMs = hourToMs;
    const ends = (column: string) =>
      `(${column} >= ${at('sealFromMs')} AND ${column} < ${at('hourFromMs')}) OR (${column} >= ${at('hourToMs')} AND ${column} < ${at('sealToMs')})`;
    if (hours.stale.length <= MAX_HOUR_RANGES) {
      hours.stale.forEach((hour, i) => (params[`hour${i}Ms`] = hour));
      minutes = (column) =>
        `(${[ends(column), ...hours.stale.map((_, i) => `(${column} >= ${at(`hour${i}Ms`)} AND ${column} < ${at(`hour${i}Ms`)} + INTERVAL 1 HOUR)`)].join(' OR ')})`;
    } else {
      minutes = (column) =>
        `(${ends(column)} OR (${column} >= ${at('hourFromMs')} AND ${column} < ${at('hourToMs')} AND toUnixTimestamp64Milli(${hourOf(column)}) NOT IN {currentHoursMs:Array(Int64)}))`;
    }
  }
  // When the current hours answer the whole range, the minute parts would read nothing: leave them out.
  const hoursAreAll = hours.current.length > 0 && hours.stale.length === 0 && hourFromMs === fromMs && hourToMs === toMs;
  const parts = [
    ...(hours.current.length > 0
      ? [
          coarse
            ? `SELECT hour AS t, ${COARSE_DIMENSIONS}, ${FIGURES} FROM (${COARSE_CURRENT_HOUR_ROWS_SQL})`
            : `SELECT hour AS t, ${DIMENSIONS}, ${FIGURES} FROM (${CURRENT_HOUR_ROWS_SQL})`,
        ]
      : []),
    ...(hoursAreAll
      ? []
      : [
          `SELECT minute AS t, ${DIMENSIONS}, ${FIGURES} FROM (${sealedMinuteRowsSql(minutes)})`,
          facts(` AND (${outsideSealed('minute')} OR minute IN (${unsealedMinutesSql(minutes)}))`),
        ]),
  ];
  return { sql: parts.join('\nUNION ALL '), params };
}

/** The hours of [hourFromMs, hourToMs) that hold span rows, split by whether their hour rows are current (ms since the epoch). */
async function hoursWithData(
  db: ScopedClickHouse,
  hourFromMs: number,
  hourToMs: number,
  coarse: boolean,
): Promise<{ current: number[]; stale: number[] }> {
  const rows = await db.rows<{ hour_ms: string | number; current: number | boolean }>(
    'query.span_hours_with_data',
    coarse ? COARSE_HOURS_WITH_DATA_SQL : HOURS_WITH_DATA_SQL,
    { hourFromMs, hourToMs },
  );
  const current: number[] = [];
  const stale: number[] = [];
  for (const row of rows) (Number(row.current) === 1 ? current : stale).push(Number(row.hour_ms));
  return { current: current.sort((a, b) => a - b), stale: stale.sort((a, b) => a - b) };
}
