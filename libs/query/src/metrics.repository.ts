import { TRACE_HOUR_AGGREGATES, TRACE_METRIC_HOUR_ROWS_SQL } from '@spanforge/clickhouse';
import { badInput } from '@spanforge/errors';
import { autoGranularity, bucketStarts, checkTimeZone, hasWholeHourOffsets, type Granularity } from './metrics-buckets';
import { parseInstant } from './query.values';
import type { ScopedClickHouse } from './scoped-clickhouse';
import { sketch, spanFigureRows } from './span-figures';
import { timeRange, traceFilterSql, tracesFiledBetween, type TraceFilter } from './trace-filter';

/*
 * The `metrics` query: time series of measures over spans, traces or feedback scores, grouped by
 * dimensions, in buckets of a time zone. Every bucket of the range has a point; counts and sums are
 * 0 where nothing happened, averages, rates and percentiles null. Series are the top `limit` by
 * the first measure over the whole range. Wrapper spans that only repeat their children's usage
 * add no cost or tokens (usage_is_aggregate), as everywhere.
 */

export type MetricsView = 'SPANS' | 'TRACES' | 'FEEDBACK';
export type Measure =
  | 'COUNT'
  | 'ERROR_COUNT'
  | 'ERROR_RATE'
  | 'COST_USD'
  | 'INPUT_TOKENS'
  | 'OUTPUT_TOKENS'
  | 'DURATION_AVG_MS'
  | 'DURATION_P50_MS'
  | 'DURATION_P95_MS'
  | 'DURATION_P99_MS'
  | 'TTFT_P50_MS'
  | 'TTFT_P95_MS'
  | 'SCORE_AVG';
export type MetricDimension =
  'MODEL' | 'PROVIDER' | 'SPAN_TYPE' | 'SERVICE' | 'NAME' | 'ROOT_NAME' | 'USER_ID' | 'ITERATIONS' | 'SCORE_NAME';

export interface MetricsQuery {
  view: MetricsView;
  measures: Measure[];
  groupBy?: MetricDimension[] | null;
  /** Absent: no time axis (one point per series, time null). */
  granularity?: Granularity | 'AUTO' | null;
  from: string | Date;
  to: string | Date;
  timezone?: string | null;
  filter?: TraceFilter | null;
  limit?: number | null;
}

export interface MetricsPoint {
  /** Bucket start, ms since the epoch; null without a time axis. */
  time: number | null;
  /** In the order of the measures. */
  values: Array<number | null>;
}

export interface MetricsSeries {
  keys: string[];
  points: MetricsPoint[];
}

export interface MetricsAnswer {
  granularity: Granularity | null;
  series: MetricsSeries[];
}

export const DEFAULT_SERIES_LIMIT = 20;
export const MAX_SERIES_LIMIT = 200;
const MAX_MEASURES = 13;
const MAX_DIMENSIONS = 3;

/** Measures that are sums or counts: 0 where a bucket has no data; the others are null there. */
const ADDITIVE: ReadonlySet<Measure> = new Set(['COUNT', 'ERROR_COUNT', 'COST_USD', 'INPUT_TOKENS', 'OUTPUT_TOKENS']);

interface ViewSql {
  /**
   * SELECT of the rows, with `t` the row's time (DateTime64) and the view's columns. `hours`:
   * whether hour rows may stand in for their minutes (the buckets are whole UTC hours);
   * `dimensions`: what the query groups by.
   */
  source: (
    db: ScopedClickHouse,
    filter: TraceFilter,
    hours: boolean,
    dimensions: MetricDimension[],
  ) => Promise<{ sql: string; params: Record<string, unknown> }>;
  measures: Partial<Record<Measure, string>>;
  dimensions: Partial<Record<MetricDimension, string>>;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The dimensions the trace-metrics hour rollup keeps; grouping by another one reads the traces. */
const TRACE_ROLLUP_DIMENSIONS: ReadonlySet<MetricDimension> = new Set(['ROOT_NAME', 'SERVICE', 'ITERATIONS']);

/**
 * The traces (trace_minutes: each trace's figures under the UTC minute it starts in, sorted by it)
 * that start in {fromMs, toMs} and meet `conditions` (a WHERE on the trace figures, or ''), as `h`.
 * Only the scope and the minutes are read under FINAL: conditions on other columns apply to the
 * newest row of each trace, after FINAL.
 */
function tracesStartingIn(conditions: string, fromName: string, toName: string): string {
  const at = (name: string) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`;
  const range = `start_time >= ${at(fromName)} AND start_time < ${at(toName)}`;
  return `(SELECT * FROM ${tracesFiledBetween(fromName, toName)}
           WHERE ${range}${conditions ? ` AND (${conditions.replace(/^ WHERE /, '')})` : ''}) AS h`;
}

/**
 * TRACES rows of the trace-metrics shape (t, dimensions, traces, error_traces, sums, duration
 * sketch): per minute from the traces themselves, or per hour from the rollup. The rollup answers
 * the whole hours of a range when nothing but the range filters the traces, the buckets are whole
 * UTC hours and the dimensions are the rollup's; the traces the part hours at its ends, and
 * everything else. Every part is range-sized: both tables are sorted by hour.
 */
async function traceMetricRows(
  filter: TraceFilter,
  hours: boolean,
  dimensions: MetricDimension[],
): Promise<{ sql: string; params: Record<string, unknown> }> {
  const { from, to } = timeRange(filter);
  const traces = traceFilterSql({ ...filter, from: undefined, to: undefined });
  const params: Record<string, unknown> = { ...traces.params, tracesFromMs: from!, tracesToMs: to! };
  const perMinute = (fromName: string, toName: string) => `
    SELECT toDateTime64(intDiv(toUnixTimestamp64Milli(h.start_time), ${MINUTE_MS}) * 60, 0, 'UTC') AS t, h.root_name AS root_name,
      toString(h.service_name) AS service_name, h.user_id AS user_id, h.iterations AS iterations, ${TRACE_HOUR_AGGREGATES}
    FROM ${tracesStartingIn(traces.traces, fromName, toName)}
    GROUP BY t, root_name, service_name, user_id, iterations`;
  const wholeFromMs = Math.ceil(from! / HOUR_MS) * HOUR_MS;
  const wholeToMs = Math.floor(to! / HOUR_MS) * HOUR_MS;
  const rollup = !traces.traces && hours && dimensions.every((d) => TRACE_ROLLUP_DIMENSIONS.has(d)) && wholeFromMs < wholeToMs;
  if (!rollup) return { sql: perMinute('tracesFromMs', 'tracesToMs'), params };
  Object.assign(params, { rollupFromMs: wholeFromMs, rollupToMs: wholeToMs });
  const parts = [
    `SELECT hour AS t, root_name, toString(service_name) AS service_name, '' AS user_id, iterations, traces, error_traces, cost_usd, input_tokens,
       output_tokens, duration_sum_ms, duration_sketch
     FROM (${TRACE_METRIC_HOUR_ROWS_SQL})`,
  ];
  if (from! < wholeFromMs) parts.push(perMinute('tracesFromMs', 'rollupFromMs'));
  if (wholeToMs < to!) parts.push(perMinute('rollupToMs', 'tracesToMs'));
  return { sql: parts.join('\n    UNION ALL\n'), params };
}

const VIEWS: Record<MetricsView, ViewSql> = {
  SPANS: {
    source: (db, filter, hours, dimensions) => spanFigureRows(db, filter, { hours, names: dimensions.includes('NAME') }),
    measures: {
      COUNT: 'sum(spans)',
      ERROR_COUNT: 'sum(errors)',
      ERROR_RATE: 'sum(errors) / sum(spans)',
      COST_USD: 'sum(cost_usd)',
      INPUT_TOKENS: 'sum(input_tokens)',
      OUTPUT_TOKENS: 'sum(output_tokens)',
      DURATION_AVG_MS: 'sum(duration_sum_ms) / sum(spans)',
      DURATION_P50_MS: sketch('duration', 'p50'),
      DURATION_P95_MS: sketch('duration', 'p95'),
      DURATION_P99_MS: sketch('duration', 'p99'),
      TTFT_P50_MS: `if(sum(ttft_count) = 0, NULL, ${sketch('ttft', 'p50')})`,
      TTFT_P95_MS: `if(sum(ttft_count) = 0, NULL, ${sketch('ttft', 'p95')})`,
    },
    dimensions: {
      MODEL: 'toString(model)',
      PROVIDER: 'toString(provider)',
      SPAN_TYPE: 'toString(span_type)',
      SERVICE: 'toString(service_name)',
      NAME: 'toString(name)',
    },
  },
  TRACES: {
    source: async (_db, filter, hours, dimensions) => traceMetricRows(filter, hours, dimensions),
    measures: {
      COUNT: 'sum(traces)',
      ERROR_COUNT: 'sum(error_traces)',
      ERROR_RATE: 'sum(error_traces) / sum(traces)',
      COST_USD: 'sum(cost_usd)',
      INPUT_TOKENS: 'sum(input_tokens)',
      OUTPUT_TOKENS: 'sum(output_tokens)',
      DURATION_AVG_MS: 'sum(duration_sum_ms) / sum(traces)',
      DURATION_P50_MS: sketch('duration', 'p50'),
      DURATION_P95_MS: sketch('duration', 'p95'),
      DURATION_P99_MS: sketch('duration', 'p99'),
    },
    dimensions: {
      ROOT_NAME: 'root_name',
      SERVICE: 'service_name',
      USER_ID: 'user_id',
      ITERATIONS: 'toString(iterations)',
    },
  },
  FEEDBACK: {
    source: async (_db, filter) => {
      const { from, to, ...rest } = filter;
      const range = { fromMs: parseInstant(from, 'from'), toMs: parseInstant(to, 'to') };
      const traces = traceFilterSql(rest);
      const matching = traces.traces ? ` AND trace_id IN (SELECT trace_id FROM ${traces.figures}${traces.traces})` : '';
      return {
        sql: `SELECT received_at AS t, name, value_number
              FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                AND received_at >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') AND received_at < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')${matching}`,
        params: { ...traces.params, ...range },
      };
    },
    measures: { COUNT: 'count()', SCORE_AVG: 'avgIf(value_number, isNotNull(value_number))' },
    dimensions: { SCORE_NAME: 'toString(name)' },
  },
};

/** The bucket of `t` as seconds since the epoch; the zone is a bound parameter ({tz:String}). */
function bucketSql(granularity: Granularity): string {
  switch (granularity) {
    case 'MINUTE':
      return 'intDiv(toUnixTimestamp64Milli(t), 60000) * 60';
    case 'HOUR':
      return 'toUnixTimestamp(toStartOfHour(t, {tz:String}))';
    case 'DAY':
      return 'toUnixTimestamp(toStartOfDay(t, {tz:String}))';
    case 'WEEK':
      return 'toUnixTimestamp(toDateTime(toMonday(t, {tz:String}), {tz:String}))';
  }
}

/** A checked query: what the SQL and the answer need. */
interface Plan {
  view: ViewSql;
  measures: Measure[];
  dimensions: MetricDimension[];
  granularity: Granularity | null;
  zone: string;
  from: number;
  to: number;
  starts: number[];
  limit: number;
  filter: TraceFilter;
}

function plan(query: MetricsQuery): Plan {
  const view = VIEWS[query.view];
  if (!view) throw badInput(`view must be one of ${Object.keys(VIEWS).join(', ')}`);
  const measures = query.measures ?? [];
  if (measures.length === 0 || measures.length > MAX_MEASURES) throw badInput(`measures: give 1 to ${MAX_MEASURES}`);
  for (const measure of measures) {
    if (!view.measures[measure])
      throw badInput(`measure ${measure} is not available on ${query.view}: use ${Object.keys(view.measures).join(', ')}`);
  }
  const dimensions = query.groupBy ?? [];
  if (dimensions.length > MAX_DIMENSIONS) throw badInput(`groupBy: at most ${MAX_DIMENSIONS} dimensions`);
  if (new Set(dimensions).size !== dimensions.length) throw badInput('groupBy names a dimension twice');
  for (const dimension of dimensions) {
    if (!view.dimensions[dimension])
      throw badInput(`dimension ${dimension} is not available on ${query.view}: use ${Object.keys(view.dimensions).join(', ')}`);
  }
  const from = parseInstant(query.from, 'from');
  const to = parseInstant(query.to, 'to');
  if (from === undefined || to === undefined) throw badInput('from and to are required');
  if (from >= to) throw badInput('from must be before to');
  const zone = checkTimeZone(query.timezone);
  const granularity = query.granularity === 'AUTO' ? autoGranularity(from, to) : (query.granularity ?? null);
  const limit = query.limit ?? DEFAULT_SERIES_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SERIES_LIMIT) throw badInput(`limit must be 1 to ${MAX_SERIES_LIMIT}`);
  const starts = granularity ? bucketStarts(from, to, granularity, zone) : [];
  // The query's range is the one that counts; a filter's own from/to narrow the traces it picks.
  const filter: TraceFilter = { ...(query.filter ?? {}), from: new Date(from), to: new Date(to) };
  return { view, measures, dimensions, granularity, zone, from, to, starts, limit, filter };
}

/** SQL behind `metrics`, bound to one project. */
export class MetricsRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  async metrics(query: MetricsQuery): Promise<MetricsAnswer> {
    const p = plan(query);
    const hours = p.granularity !== 'MINUTE' && hasWholeHourOffsets(p.zone, p.from, p.to);
    const source = await p.view.source(this.db, p.filter, hours, p.dimensions);
    const keys = p.dimensions.length ? `[${p.dimensions.map((d) => p.view.dimensions[d]).join(', ')}]` : '[]';
    const values = p.measures.map((m, i) => `${p.view.measures[m]} AS m${i}`).join(', ');
    const params = { ...source.params, tz: p.zone, limit: p.limit };

    // Without a time axis every row is in one bucket (materialize: a constant key would leave GROUPING SETS' keys).
    const bucket = p.granularity ? bucketSql(p.granularity) : 'materialize(0)';
    if (p.dimensions.length === 0) {
      const rows = await this.db.rows<PointRow>(
        'query.metrics_points',
        `SELECT [] AS keys, ${bucket} AS bucket, ${values} FROM (${source.sql}) GROUP BY bucket ORDER BY bucket`,
        params,
      );
      return { granularity: p.granularity, series: assemble(p, [[]], rows) };
    }
    // One pass over the source: each series' buckets and its whole range, whose first measure ranks
    // the series; the buckets of the top `limit` series come back, with their place. A count or sum
    // over the whole range is the sum of its buckets'; any other first measure (a percentile, a
    // rate) is aggregated over the whole range too (GROUPING SETS), which costs a second merge.
    const additive = ADDITIVE.has(p.measures[0]!);
    const perBucket = additive
      ? `SELECT *, 0 AS whole, sum(m0) OVER (PARTITION BY keys) AS series_rank
         FROM (SELECT ${keys} AS keys, ${bucket} AS bucket, ${values} FROM (${source.sql}) GROUP BY keys, bucket)`
      : `SELECT *, max(if(whole = 1, m0, NULL)) OVER (PARTITION BY keys) AS series_rank
         FROM (
           SELECT ${keys} AS keys, ${bucket} AS bucket, grouping(bucket) AS whole, ${values}
           FROM (${source.sql})
           GROUP BY GROUPING SETS ((keys, bucket), (keys))
         )`;
    const rows = await this.db.rows<PointRow & { place: number }>(
      'query.metrics_points',
      `SELECT keys, bucket, place, ${p.measures.map((_, i) => `m${i}`).join(', ')}
       FROM (
         SELECT *, dense_rank() OVER (ORDER BY series_rank DESC NULLS LAST, keys) AS place
         FROM (${perBucket})
       )
       WHERE whole = 0 AND place <= {limit:UInt32}
       ORDER BY place, bucket`,
      params,
    );
    const chosen: string[][] = [];
    for (const row of rows) if (chosen.length < Number(row.place)) chosen.push(row.keys);
    return { granularity: p.granularity, series: assemble(p, chosen, rows) };
  }
}

/** A point of a series as the statement answers it: its series, its bucket start (seconds) and measures m0, m1… */
type PointRow = Record<string, unknown> & { keys: string[]; bucket: number };

/** Every series gets every bucket, in the order chosen; missing buckets are 0 or null by measure. */
function assemble(p: Plan, chosen: string[][], rows: PointRow[]): MetricsSeries[] {
  const empty = p.measures.map((m) => (ADDITIVE.has(m) ? 0 : null));
  const bySeries = new Map<string, Map<number, Array<number | null>>>();
  for (const row of rows) {
    const id = JSON.stringify(row.keys);
    let points = bySeries.get(id);
    if (!points) bySeries.set(id, (points = new Map()));
    const at = p.granularity ? bucketOf(p.starts, Number(row.bucket) * 1000) : 0;
    points.set(
      at,
      p.measures.map((_, i) => numberOrNull(row[`m${i}`])),
    );
  }
  return chosen.map((keys) => {
    const points = bySeries.get(JSON.stringify(keys)) ?? new Map<number, Array<number | null>>();
    if (!p.granularity) return { keys, points: [{ time: null, values: points.get(0) ?? [...empty] }] };
    return { keys, points: p.starts.map((time) => ({ time, values: points.get(time) ?? [...empty] })) };
  });
}

/** The listed bucket a start computed by ClickHouse falls in (the same one, unless the tz databases differ). */
function bucketOf(starts: number[], ms: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= ms) low = mid;
    else high = mid - 1;
  }
  return starts[low]!;
}

function numberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}
