import { badInput } from '@spanforge/errors';
import type { ScopedClickHouse } from './scoped-clickhouse';
import { parseInstant } from './query.values';
import { feedbackBounds, minuteOfParam, timeRange, traceFilterSql, type TraceFilter } from './trace-filter';

export interface IterationLatencyRow {
  iterations: number;
  trace_count: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  avg_cost_usd: number;
}

export const COST_DIMENSIONS = ['MODEL', 'PROVIDER', 'SPAN_TYPE', 'SERVICE', 'DAY', 'SESSION'] as const;
export type CostDimension = (typeof COST_DIMENSIONS)[number];

/** The expression (as text) each dimension groups by, over trace_figures' cost rows; fixed SQL, never user text. */
const DIMENSION_SQL: Record<CostDimension, string> = {
  MODEL: 'toString(r.model)',
  PROVIDER: 'toString(r.provider)',
  SPAN_TYPE: 'toString(r.span_type)',
  SERVICE: 'toString(r.service)',
  DAY: 'toString(toDate(start_time))',
  SESSION: 'session_id',
};

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The same over day-keyed rows of (model, provider, span_type, service, day): cost_daily's. */
const DAILY_DIMENSION_SQL: Record<Exclude<CostDimension, 'SESSION'>, string> = {
  MODEL: 'toString(model)',
  PROVIDER: 'toString(provider)',
  SPAN_TYPE: 'toString(span_type)',
  SERVICE: 'toString(service)',
  DAY: 'toString(day)',
};

export interface CostRowRecord {
  keys: string[];
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  span_count: number;
}

export interface SessionRecord {
  session_id: string;
  /** Per score name: count, sum of numeric values, count of numeric values (a named tuple: JSON objects). */
  feedback: Array<{ name: string; count: number; sum: number; numeric: number }>;
  trace_count: number;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  first_seen: string;
  last_seen: string;
}

/** A session's scores per name, from its figures: count, and the mean of the numeric ones (null when none). */
export function sessionScores(record: Pick<SessionRecord, 'feedback'>): Array<{ name: string; count: number; avg: number | null }> {
  return (record.feedback ?? [])
    .map(({ name, count, sum, numeric }) => ({
      name,
      count: Number(count),
      avg: Number(numeric) > 0 ? Number(sum) / Number(numeric) : null,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface SessionFilter {
  from?: string | Date;
  to?: string | Date;
  userId?: string;
  /** Sessions with this score; with min/max, whose mean score over the session's traces is in range. */
  feedback?: { name: string; min?: number | null; max?: number | null } | null;
}

/** The columns of a session's figures, in the order sessionsActiveSince keeps them. */
const SESSION_COLUMNS = ['trace_count', 'cost_usd', 'input_tokens', 'output_tokens', 'first_seen', 'last_seen', 'user_id', 'feedback'];

/**
 * The newest figures of every session last active at or after `{<fromParam>}` (milliseconds,
 * bound), and of some last active earlier in that same minute, as a subquery. session_minutes
 * files each computation of a session under the minute of its last_seen, sorted by minute; a
 * session's last_seen only grows (the erasure, which can make it earlier, deletes the older
 * computations once it has computed the session again), so its newest computation is among the
 * minutes read whenever its last_seen is at or after the start, and is the one kept (argMax by
 * computed_at, a hash aggregation: no sort of the rows read). Reads the minutes since the start,
 * not the project. docs/architecture.md, "Session lists over a time range".
 */
function sessionsActiveSince(fromParam: string): string {
  return `(SELECT tenant_id, project_id, session_id, ${SESSION_COLUMNS.map((c, i) => `s.${i + 1} AS ${c}`).join(', ')}
           FROM (SELECT tenant_id, project_id, session_id, argMax((${SESSION_COLUMNS.join(', ')}), computed_at) AS s
                 FROM session_minutes
                 WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                   AND minute >= ${minuteOfParam(fromParam)}
                 GROUP BY tenant_id, project_id, session_id))`;
}

/**
 * All SQL behind the aggregate queries. Per-trace and per-session aggregates read the narrow
 * figures tables (one current row each); percentiles are exact and inclusive (linear interpolation).
 */
export class AnalyticsRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  async latencyByIterations(filter: TraceFilter | undefined): Promise<IterationLatencyRow[]> {
    const sql = traceFilterSql(filter);
    return this.db.rows<IterationLatencyRow>(
      'query.latency_by_iterations',
      `SELECT iterations, count() AS trace_count,
              quantileExactInclusive(0.5)(duration_ms) AS p50_ms,
              quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
              quantileExactInclusive(0.99)(duration_ms) AS p99_ms,
              avg(cost_usd) AS avg_cost_usd
       FROM ${sql.figures}${sql.traces}
       GROUP BY iterations ORDER BY iterations`,
      sql.params,
    );
  }

  /**
   * Cost and tokens grouped by the chosen dimensions, from the spans that own their usage
   * (aggregate spans repeat their children's and are left out), each span once: summed from the
   * per-trace cost rows of the trace figures (of the range's minutes when it has a start). DAY is
   * the day the trace started.
   */
  async costBreakdown(groupBy: CostDimension[], filter: TraceFilter | undefined): Promise<CostRowRecord[]> {
    if (groupBy.length === 0 || groupBy.length > COST_DIMENSIONS.length) throw badInput('groupBy needs 1 to 6 dimensions');
    if (new Set(groupBy).size !== groupBy.length) throw badInput('groupBy repeats a dimension');
    const daily = await this.costBreakdownDaily(groupBy, filter);
    if (daily) return daily;
    const sql = traceFilterSql(filter);
    const keys = groupBy.map((d) => DIMENSION_SQL[d]);
    return this.db.rows<CostRowRecord>(
      'query.cost_breakdown',
      `SELECT [${keys.join(', ')}] AS keys, sum(r.cost_usd) AS cost_usd, sum(r.input_tokens) AS input_tokens, sum(r.output_tokens) AS output_tokens, sum(r.spans) AS span_count
       FROM ${sql.figures}
       ARRAY JOIN cost_rows AS r${sql.traces}
       GROUP BY keys ORDER BY cost_usd DESC, keys LIMIT 10000`,
      sql.params,
    );
  }

  /**
   * The same answer from day-keyed tables, read only for the range's days, when the question fits
   * them: no SESSION dimension and no filter but the time range.
   * - The whole UTC days of the range come from cost_daily (one row per day and model, provider,
   *   type, service).
   * - A part day at either end (a range such as "the last 30 days" from now, or one hour) comes
   *   from cost_minute (the same rows per minute of the traces' starts) for its whole minutes, and
   *   from trace_minutes (each trace's start and cost rows under its start minute) for the part
   *   minutes at its ends: what the part's minutes hold, however busy the day.
   *
   * A project's retention starts the range where it starts (what is older is answered by no table).
   *
   * While the upkeep moves a trace whose start turned out to be a minute earlier, the trace's cost
   * rows move before the minute and daily rows do: for that moment such a trace can count in both
   * places, where the general path counts it once.
   */
  private async costBreakdownDaily(groupBy: CostDimension[], filter: TraceFilter | undefined): Promise<CostRowRecord[] | undefined> {
    if (groupBy.includes('SESSION')) return undefined;
    const { from, to, ...rest } = filter ?? {};
    if (Object.values(rest).some((v) => v !== undefined && v !== null)) return undefined;
    const range = timeRange({ from, to });
    // Day rows keep a partly expired day whole (a read cannot split them): the range starts where
    // the retention does, so that day is a part day, read from each trace's start.
    const keptSince = await this.db.keptSinceMs();
    const fromMs = keptSince === undefined || (range.from !== undefined && range.from >= keptSince) ? range.from : keptSince;
    const toMs = range.to;
    // [firstDayMs, endDayMs): the whole days inside the range; the rest are part days, [from, to) of one day each.
    const firstDayMs = fromMs === undefined ? undefined : Math.ceil(fromMs / DAY_MS) * DAY_MS;
    const endDayMs = toMs === undefined ? undefined : Math.floor(toMs / DAY_MS) * DAY_MS;
    const wholeDays = firstDayMs === undefined || endDayMs === undefined || firstDayMs < endDayMs;
    const parts: Array<[number, number]> =
      firstDayMs !== undefined && endDayMs !== undefined && firstDayMs > endDayMs
        ? [[fromMs!, toMs!]]
        : [
            ...(fromMs !== undefined && fromMs < firstDayMs! ? [[fromMs, firstDayMs!] as [number, number]] : []),
            ...(toMs !== undefined && endDayMs! < toMs ? [[endDayMs!, toMs] as [number, number]] : []),
          ];
    const params: Record<string, number> = {};
    const instant = (name: string) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`;
    const reads: string[] = [];
    if (wholeDays) {
      const days = [
        firstDayMs === undefined ? '' : ` AND day >= toDate(${instant('firstDayMs')})`,
        endDayMs === undefined ? '' : ` AND day < toDate(${instant('endDayMs')})`,
      ].join('');
      Object.assign(params, firstDayMs === undefined ? {} : { firstDayMs }, endDayMs === undefined ? {} : { endDayMs });
      reads.push(`SELECT model, provider, span_type, service, day, cost_usd, input_tokens, output_tokens, spans
       FROM cost_daily FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${days}`);
    }
    parts.forEach(([partFrom, partTo], i) => {
      // The whole minutes inside the part from cost_minute, the part minutes at its ends from the
      // traces filed under them (trace_minutes, which holds each trace's start and cost rows).
      const firstMinuteMs = Math.ceil(partFrom / MINUTE_MS) * MINUTE_MS;
      const endMinuteMs = Math.floor(partTo / MINUTE_MS) * MINUTE_MS;
      if (firstMinuteMs < endMinuteMs) {
        Object.assign(params, { [`part${i}FirstMinute`]: firstMinuteMs, [`part${i}EndMinute`]: endMinuteMs });
        reads.push(`SELECT model, provider, span_type, service, toDate(minute) AS day, cost_usd, input_tokens, output_tokens, spans
       FROM cost_minute FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         AND minute >= ${instant(`part${i}FirstMinute`)} AND minute < ${instant(`part${i}EndMinute`)}`);
      }
      // Within one minute the part is its own part minute; otherwise the pieces before the first and after the last whole minute.
      const partMinutes: Array<[number, number]> =
        firstMinuteMs > endMinuteMs
          ? [[partFrom, partTo]]
          : (
              [
                [partFrom, firstMinuteMs],
                [endMinuteMs, partTo],
              ] as Array<[number, number]>
            ).filter(([from, to]) => from < to);
      partMinutes.forEach(([minuteFrom, minuteTo], j) => {
        const name = `part${i}Minute${j}`;
        Object.assign(params, { [`${name}From`]: minuteFrom, [`${name}To`]: minuteTo });
        // The start condition outside FINAL: under FINAL the engine applies no condition on a column outside the sorting key before the merge.
        reads.push(`SELECT r.model AS model, r.provider AS provider, r.span_type AS span_type, r.service AS service, toDate(t.minute) AS day,
              r.cost_usd AS cost_usd, r.input_tokens AS input_tokens, r.output_tokens AS output_tokens, r.spans AS spans
       FROM (SELECT * FROM trace_minutes FINAL
             WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
               AND minute = ${minuteOfParam(`${name}From`)}) AS t
       ARRAY JOIN t.cost_rows AS r
       WHERE t.start_time >= ${instant(`${name}From`)} AND t.start_time < ${instant(`${name}To`)}`);
      });
    });
    return this.db.rows<CostRowRecord>(
      parts.length === 0
        ? 'query.cost_breakdown_daily'
        : wholeDays
          ? 'query.cost_breakdown_daily_and_part_days'
          : 'query.cost_breakdown_part_days',
      `SELECT [${groupBy.map((d) => DAILY_DIMENSION_SQL[d as Exclude<CostDimension, 'SESSION'>]).join(', ')}] AS keys,
              sum(cost_usd) AS cost_usd, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(spans) AS span_count
       FROM (${reads.join('\n       UNION ALL\n       ')})
       GROUP BY keys HAVING span_count > 0 ORDER BY cost_usd DESC, keys LIMIT 10000`,
      params,
    );
  }

  /**
   * Sessions, most expensive first, a page at a time; a session is in range when it overlaps it.
   * With a `from`, from the minutes of session_minutes since it (sessionsActiveSince), else from
   * session_figures. With `count: false` the total (a second read) is not made: undefined.
   */
  async sessions(
    filter: SessionFilter | undefined,
    first: number,
    after: [number, string] | undefined,
    count = true,
  ): Promise<{ rows: SessionRecord[]; total: number | undefined }> {
    const f = filter ?? {};
    const having: string[] = [];
    const params: Record<string, unknown> = {};
    const from = parseInstant(f.from, 'filter.from');
    const to = parseInstant(f.to, 'filter.to');
    if (from !== undefined) {
      params.fromMs = from;
      having.push("last_seen >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')");
    }
    if (to !== undefined) {
      params.toMs = to;
      having.push("first_seen < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')");
    }
    if (f.userId !== undefined && f.userId !== null) {
      params.userId = f.userId;
      having.push('user_id = {userId:String}');
    }
    if (f.feedback) {
      if (typeof f.feedback.name !== 'string' || f.feedback.name.length === 0 || f.feedback.name.length > 100)
        throw badInput('filter.feedback.name must be 1 to 100 characters');
      params.feedbackName = f.feedback.name;
      const bounds = feedbackBounds(f.feedback, 'f.value_number', params);
      having.push(
        `session_id IN (SELECT t.session_id FROM
           (SELECT trace_id, value_number FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND name = {feedbackName:String}) AS f
           INNER JOIN (SELECT trace_id, session_id FROM trace_figures FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND session_id != '') AS t
           ON f.trace_id = t.trace_id
           GROUP BY t.session_id${bounds.length ? ` HAVING ${bounds.join(' AND ')}` : ''})`,
      );
    }
    const base = `
      SELECT session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback
      FROM ${from !== undefined ? sessionsActiveSince('fromMs') : 'session_figures FINAL'}
      WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${having.map((c) => ` AND ${c}`).join('')}`;
    const cursor = after ? ' WHERE (cost_usd, session_id) < ({afterCost:Float64}, {afterSession:String})' : '';
    const [rows, counted] = await Promise.all([
      this.db.rows<SessionRecord>(
        'query.sessions_page',
        `SELECT session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, feedback FROM (${base})${cursor} ORDER BY cost_usd DESC, session_id DESC LIMIT {limit:UInt32}`,
        { ...params, ...(after ? { afterCost: after[0], afterSession: after[1] } : {}), limit: first + 1 },
      ),
      count ? this.db.rows<{ n: number }>('query.sessions_count', `SELECT count() AS n FROM (${base})`, params) : undefined,
    ]);
    return { rows, total: counted && Number(counted[0]?.n ?? 0) };
  }
}
