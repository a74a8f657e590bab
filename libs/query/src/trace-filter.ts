import { badInput } from '@spanforge/errors';
import { parseInstant } from './query.values';

export interface AttributeEquals {
  key: string;
  /** Compared with the stored text: strings as they are, numbers and booleans as JSON ("42", "true"). */
  value: string;
}

/** Traces whose mean score of `name` lies in [min, max] (either bound optional). */
export interface FeedbackScoreFilter {
  name: string;
  min?: number | null;
  max?: number | null;
}

/** What users filter traces by (GraphQL TraceFilter). Absent from/to = all time. */
export interface TraceFilter {
  feedback?: FeedbackScoreFilter | null;
  from?: string | Date;
  to?: string | Date;
  sessionId?: string;
  userId?: string;
  rootName?: string;
  hasError?: boolean;
  minIterations?: number;
  maxIterations?: number;
  model?: string;
  attributes?: AttributeEquals[];
}

const MAX_ATTRIBUTE_FILTERS = 10;
const MAX_TEXT = 1_000;

export interface TraceFilterSql {
  /** Extra WHERE on the `traces` rollup rows (day pruning). */
  rows: string;
  /**
   * The per-trace figures (one current row per trace) that `traces` filters, as a subquery: read
   * from the minutes of the range when the traces must start within it, else the project's.
   */
  figures: string;
  /** WHERE on the per-trace figures (after merging rows). */
  traces: string;
  params: Record<string, unknown>;
  /** Whether `figures` is the whole project's (no start of range, or traces need not start in it). */
  wholeProject: boolean;
}

const MINUTE_MS = 60_000;
const SCOPE = 'tenant_id = {tenantId:String} AND project_id = {projectId:String}';

/** The start of the UTC minute of a bound instant `{<param>:Int64}` (ms), for a condition on a `minute` column. */
export function minuteOfParam(param: string): string {
  return `fromUnixTimestamp64Milli(intDiv({${param}:Int64}, ${MINUTE_MS}) * ${MINUTE_MS}, 'UTC')`;
}

/**
 * The current figures of the traces that start in the minutes from `{<fromParam>}` (rounded down
 * to its minute) up to `{<toParam>}` (milliseconds, bound; no upper end without one), from
 * trace_minutes, which files each trace under the minute it starts in and is sorted by it: a
 * range reads its own minutes, not the project. Callers still bound start_time exactly. A trace
 * whose start moved to an earlier minute is listed once: the minute it left holds an empty row
 * (present = 0) that wins there; between the worker's two inserts (its new figures, then the empty
 * row) it can be seen in both minutes for a moment. docs/architecture.md, "Trace lists over a
 * time range".
 */
export function tracesFiledBetween(fromParam: string, toParam?: string): string {
  return tracesFiledIn([`minute >= ${minuteOfParam(fromParam)}`, ...(toParam ? [minuteBefore(toParam)] : [])]);
}

/** The current figures of the traces filed under the minutes these conditions on `minute` keep (trace_minutes). */
function tracesFiledIn(minutes: string[]): string {
  return `(SELECT * FROM (SELECT * FROM trace_minutes FINAL WHERE ${SCOPE} AND ${minutes.join(' AND ')}) WHERE present = 1)`;
}

/** The minutes that start before a bound instant `{<param>:Int64}` (ms). */
const minuteBefore = (param: string) => `minute < fromUnixTimestamp64Milli({${param}:Int64}, 'UTC')`;

/**
 * The current figures of the traces filed in the `windowMinutes` minutes before a list's newest
 * minute and in that minute: the traces that start there, which come first in a list newest
 * first. The newest minute is the one a cursor's trace (`{<afterNsParam>:Int64}`, ns) starts in,
 * else the newest filed before `{<toParam>:Int64}` (ms), else the newest filed. Every trace filed
 * earlier starts before every trace of the window (a trace is filed under its start's minute), so
 * a window holding a whole page (after the filter and the cursor) holds that page exactly.
 */
export function newestTracesFiled(windowMinutes: number, options: { afterNsParam?: string; toParam?: string }): string {
  const { afterNsParam, toParam } = options;
  const newest = afterNsParam
    ? `fromUnixTimestamp64Milli(intDiv({${afterNsParam}:Int64}, ${MINUTE_MS * 1_000_000}) * ${MINUTE_MS}, 'UTC')`
    : `(SELECT max(minute) FROM trace_minutes WHERE ${SCOPE}${toParam ? ` AND ${minuteBefore(toParam)}` : ''})`;
  return tracesFiledIn([
    `minute >= ${newest} - INTERVAL ${Math.trunc(windowMinutes)} MINUTE`,
    ...(afterNsParam ? [`minute <= ${newest}`] : []),
    ...(toParam ? [minuteBefore(toParam)] : []),
  ]);
}

/** Every trace's current figures in the project (sorted by trace id: a read of the whole project). */
export const ALL_TRACE_FIGURES = `(SELECT * FROM trace_figures FINAL WHERE ${SCOPE})`;

/** A filter's from and to (milliseconds, either absent), refused when the range is empty. */
export function timeRange(filter: Pick<TraceFilter, 'from' | 'to'> | undefined): { from?: number; to?: number } {
  const from = parseInstant(filter?.from, 'filter.from');
  const to = parseInstant(filter?.to, 'filter.to');
  if (from !== undefined && to !== undefined && from >= to) throw badInput('filter.from must be before filter.to');
  return { from, to };
}

/**
 * The conditions a feedback filter's min and max put on the average of `column` (for a HAVING),
 * their values bound into params as feedback_min and feedback_max.
 */
export function feedbackBounds(
  feedback: Pick<FeedbackScoreFilter, 'min' | 'max'>,
  column: string,
  params: Record<string, unknown>,
): string[] {
  const conditions: string[] = [];
  for (const [bound, op] of [
    ['min', '>='],
    ['max', '<='],
  ] as const) {
    const value = feedback[bound];
    if (value === undefined || value === null) continue;
    if (!Number.isFinite(value)) throw badInput(`filter.feedback.${bound} must be a number`);
    params[`feedback_${bound}`] = value;
    conditions.push(`avg(${column}) ${op} {feedback_${bound}:Float64}`);
  }
  if (typeof feedback.min === 'number' && typeof feedback.max === 'number' && feedback.min > feedback.max) {
    throw badInput(
      `filter.feedback.min (${feedback.min}) is greater than filter.feedback.max (${feedback.max}): no average can be in that range`,
    );
  }
  return conditions;
}

function text(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw badInput(`${field} must be a string of at most ${MAX_TEXT} characters`);
  return value;
}

/**
 * Turns a filter into SQL fragments with bound parameters only: user values never become SQL
 * text, whatever they contain (attribute keys included: they are parameters too).
 */
export function traceFilterSql(filter: TraceFilter | undefined, options: { traceStartInRange?: boolean } = {}): TraceFilterSql {
  // Span statistics take from/to for their spans: the traces need not start within them too.
  const traceStartInRange = options.traceStartInRange ?? true;
  const rows: string[] = [];
  const traces: string[] = [];
  const params: Record<string, unknown> = {};
  const f = filter ?? {};
  const { from, to } = timeRange(f);
  if (from !== undefined) {
    params.fromMs = from;
    // A trace's rollup rows sit on the days its spans start on, none before the trace's own start.
    rows.push("day >= toDate(fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC'))");
    if (traceStartInRange) traces.push("start_time >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')");
  }
  if (to !== undefined) {
    params.toMs = to;
    // One day of slack: a trace that starts before `to` may have spans starting after midnight.
    rows.push("day <= toDate(fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')) + 1");
    if (traceStartInRange) traces.push("start_time < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')");
  }
  const sessionId = text(f.sessionId, 'filter.sessionId');
  if (sessionId !== undefined) {
    params.sessionId = sessionId;
    traces.push('session_id = {sessionId:String}');
  }
  const userId = text(f.userId, 'filter.userId');
  if (userId !== undefined) {
    params.userId = userId;
    traces.push('user_id = {userId:String}');
  }
  const rootName = text(f.rootName, 'filter.rootName');
  if (rootName !== undefined) {
    params.rootName = rootName;
    traces.push('root_name = {rootName:String}');
  }
  if (f.hasError !== undefined && f.hasError !== null) traces.push(f.hasError ? 'error_count > 0' : 'error_count = 0');
  for (const [field, op, name] of [
    ['minIterations', '>=', 'minIterations'],
    ['maxIterations', '<=', 'maxIterations'],
  ] as const) {
    const value = f[field];
    if (value === undefined || value === null) continue;
    if (!Number.isInteger(value) || value < 0) throw badInput(`filter.${field} must be a non-negative integer`);
    params[name] = value;
    traces.push(`iterations ${op} {${name}:Int64}`);
  }
  if (typeof f.minIterations === 'number' && typeof f.maxIterations === 'number' && f.minIterations > f.maxIterations) {
    throw badInput(
      `filter.minIterations (${f.minIterations}) is greater than filter.maxIterations (${f.maxIterations}): no trace can match`,
    );
  }
  const model = text(f.model, 'filter.model');
  if (model !== undefined) {
    params.model = model;
    traces.push('has(models, {model:String})');
  }
  const attributes = f.attributes ?? [];
  if (attributes.length > MAX_ATTRIBUTE_FILTERS) throw badInput(`at most ${MAX_ATTRIBUTE_FILTERS} attribute filters`);
  attributes.forEach((attribute, i) => {
    params[`attrKey${i}`] = text(attribute.key, `filter.attributes[${i}].key`);
    params[`attrValue${i}`] = text(attribute.value, `filter.attributes[${i}].value`);
    const days = [
      from !== undefined ? "toDate(start_time) >= toDate(fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC'))" : '',
      to !== undefined ? "toDate(start_time) <= toDate(fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')) + 1" : '',
    ]
      .filter(Boolean)
      .map((c) => ` AND ${c}`)
      .join('');
    traces.push(
      `trace_id IN (SELECT trace_id FROM spans WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${days} AND attributes[{attrKey${i}:String}] = {attrValue${i}:String})`,
    );
  });
  if (f.feedback) {
    params.feedbackName = text(f.feedback.name, 'filter.feedback.name');
    const having = feedbackBounds(f.feedback, 'value_number', params);
    traces.push(
      `trace_id IN (SELECT trace_id FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND name = {feedbackName:String} GROUP BY trace_id${having.length ? ` HAVING ${having.join(' AND ')}` : ''})`,
    );
  }
  const wholeProject = !traceStartInRange || from === undefined;
  return {
    rows: rows.map((c) => ` AND ${c}`).join(''),
    figures: wholeProject ? ALL_TRACE_FIGURES : tracesFiledBetween('fromMs', to !== undefined ? 'toMs' : undefined),
    traces: traces.length ? ` WHERE ${traces.join(' AND ')}` : '',
    params,
    wholeProject,
  };
}
