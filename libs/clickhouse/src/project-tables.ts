/**
 * Every table that holds project data (each has `tenant_id` and `project_id` columns). A scoped
 * statement hands ClickHouse a filter for each of them (`projectTableFilters`), so whatever the
 * statement's text, a read of any of these tables — in a join, a subquery, a CTE, with FINAL —
 * sees only the scope's rows. `project-tables.int-spec.ts` checks this list against the tables
 * the migrations create: a new table of project data fails it until it is added here.
 */
export const PROJECT_TABLES = [
  'cost_daily',
  'cost_minute',
  'dead_letters',
  'erased_traces',
  'feedback',
  'ingest_accounting',
  'runs',
  'session_figures',
  'session_minutes',
  'sessions',
  'span_facts',
  'span_hour_marks',
  'span_log_events',
  'span_metrics_hour',
  'span_metrics_hour_coarse',
  'span_metrics_minute',
  'span_minute_dirt',
  'span_minute_marks',
  'spans',
  'trace_figures',
  'trace_index',
  'trace_metrics_hour',
  'trace_metrics_minute',
  'trace_minutes',
  'traces',
] as const;

export type ProjectTable = (typeof PROJECT_TABLES)[number];

/**
 * What a project's retention (`retentionDays`) hides from reads in each table: the condition a row
 * must meet to be answered, given the start of what is kept (`{since}`, a DateTime64 expression;
 * `{minute}`, `{hour}` and `{day}`: the start of the minute, hour and UTC day it falls in).
 * Rows are kept by their start time (a span's, a trace's or session's first span's, a score's
 * receipt); rows of a whole day, hour or minute are kept while their period reaches past the start,
 * so an answer forgets a partly expired day the next day. `null`: not project content under
 * retention — the ingest accounting is the usage metering (kept 400 days for billing), and
 * span_minute_dirt is the sealer's own bookkeeping (kept 2 days).
 */
export const RETAINED_SINCE: Record<ProjectTable, string | null> = {
  cost_daily: 'day >= toDate({day})',
  cost_minute: 'minute >= {minute}',
  dead_letters: 'dead_lettered_at >= {since}',
  // Tombstones outlive what they erased: a late span of an erased trace is still left out.
  erased_traces: null,
  feedback: 'received_at >= {since}',
  ingest_accounting: null,
  runs: 'first_seen >= {since}',
  session_figures: 'first_seen >= {since}',
  session_minutes: 'first_seen >= {since}',
  sessions: 'first_seen >= {since}',
  span_facts: 'minute >= {minute} AND start_time >= {since}',
  span_hour_marks: 'hour >= {hour}',
  span_log_events: 'time >= {since}',
  span_metrics_hour: 'hour >= {hour}',
  span_metrics_hour_coarse: 'hour >= {hour}',
  span_metrics_minute: 'minute >= {minute}',
  span_minute_dirt: null,
  span_minute_marks: 'minute >= {minute}',
  spans: 'start_time >= {since}',
  trace_figures: 'start_time >= {since}',
  trace_index: 'start_time >= {since}',
  trace_metrics_hour: 'hour >= {hour}',
  trace_metrics_minute: 'minute >= {minute}',
  trace_minutes: 'start_time >= {since}',
  traces: 'start_time >= {since}',
};

/**
 * Leaves out the rows whose `column` value is among the project's tombstones (`{erased}` stands
 * for them: erased_traces of the project, narrowed by `narrowing`). Guarded by a count of those
 * tombstones, a scalar the engine computes once and folds into the plan: a project that erased
 * nothing reads its rows exactly as without the filter, without reading `column` at all.
 */
const unlessErased = (column: 'trace_id' | 'session_id', narrowing = ''): string =>
  `((SELECT count() FROM {erased}${narrowing}) = 0 OR ${column} NOT IN (SELECT ${column} FROM {erased}${narrowing}))`;

/**
 * What an erasure hides in each table (docs/data-policy.md, "Erasure"): rows of an erased trace,
 * and in the session tables the sessions erased whole. Tables not listed hold no trace or session
 * of their own (rollups by minute, hour and day are recomputed by the erasure job, which also deletes
 * the dead letters holding the traces; no read returns a letter's content).
 */
export const ERASED_BY: Partial<Record<ProjectTable, string>> = {
  feedback: unlessErased('trace_id'),
  span_facts: unlessErased('trace_id'),
  span_log_events: unlessErased('trace_id'),
  spans: unlessErased('trace_id'),
  trace_figures: unlessErased('trace_id'),
  trace_minutes: unlessErased('trace_id'),
  trace_index: unlessErased('trace_id'),
  traces: unlessErased('trace_id'),
  sessions: unlessErased('session_id', ' AND whole_session = 1'),
  session_figures: unlessErased('session_id', ' AND whole_session = 1'),
  session_minutes: unlessErased('session_id', ' AND whole_session = 1'),
};

/** Tenant and project ids are UUIDs or slugs; anything else is refused before it reaches SQL text. */
const SCOPE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The `additional_table_filters` setting that confines every read of a project table to one
 * project: the engine adds `tenant_id = … AND project_id = …` to each read of each table. With
 * `keptSinceMs` (now minus the project's retention), each table's rows older than that are left
 * out too (RETAINED_SINCE): every answer and every aggregate forgets expired data at once, before
 * storage drops it. With `erasures`, the rows of erased traces and sessions are left out too
 * (ERASED_BY), from the moment their tombstones are written.
 */
export function projectTableFilters(
  scope: { tenantId: string; projectId: string },
  keptSinceMs?: number,
  options: { erasures?: boolean } = {},
): string {
  for (const id of [scope.tenantId, scope.projectId]) {
    if (!SCOPE_ID.test(id)) throw new Error(`not a tenant or project id: ${JSON.stringify(id)}`);
  }
  if (keptSinceMs !== undefined && !Number.isSafeInteger(keptSinceMs)) throw new Error(`not a time in milliseconds: ${keptSinceMs}`);
  const project = `tenant_id = ${stringLiteral(scope.tenantId)} AND project_id = ${stringLiteral(scope.projectId)}`;
  const erased = `erased_traces WHERE ${project}`;
  const filterOf = (table: ProjectTable): string => {
    const retained = keptSinceMs === undefined ? null : retainedCondition(table, keptSinceMs);
    const unerased = options.erasures ? ERASED_BY[table]?.replaceAll('{erased}', erased) : undefined;
    return [project, retained, unerased].filter((part) => part !== null && part !== undefined).join(' AND ');
  };
  return `additional_table_filters = {${PROJECT_TABLES.map((table) => `${stringLiteral(table)}: ${stringLiteral(filterOf(table))}`).join(', ')}}`;
}

/**
 * The condition a row of `table` meets while a retention that keeps what started since
 * `keptSinceMs` keeps it (RETAINED_SINCE with the instants filled in), or null for a table not
 * under retention.
 */
export function retainedCondition(table: ProjectTable, keptSinceMs: number): string | null {
  const retained = RETAINED_SINCE[table];
  if (retained === null) return null;
  if (!Number.isSafeInteger(keptSinceMs)) throw new Error(`not a time in milliseconds: ${keptSinceMs}`);
  const instant = (ms: number) => `fromUnixTimestamp64Milli(toInt64(${ms}), 'UTC')`;
  const at: Record<string, string> = {
    since: instant(keptSinceMs),
    minute: instant(keptSinceMs - (keptSinceMs % 60_000)),
    hour: instant(keptSinceMs - (keptSinceMs % 3_600_000)),
    day: instant(keptSinceMs - (keptSinceMs % 86_400_000)),
  };
  return retained.replace(/\{(since|minute|hour|day)\}/g, (_, name: string) => at[name]!);
}

/**
 * A ClickHouse string literal: nothing in `text` can end it ('' doubles a quote, backslashes are
 * escaped; a NUL byte is written as \0, since chDB takes a statement as a C string, and line
 * breaks as \n and \r, so that the literal is one line whatever it holds).
 */
export function stringLiteral(text: string): string {
  if (!/[\\'\0\n\r]/.test(text)) return `'${text}'`;
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/\0/g, '\\0').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
}
