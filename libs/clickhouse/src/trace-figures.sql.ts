import { SPAN_COPY_KEY } from './statements';

/**
 * The per-trace figures (duration, iterations, cost, tokens, errors; docs/architecture.md), computed from the `traces` rollup: its rows of one
 * trace (one per day its spans start on) are merged with GROUP BY, then each figure is derived.
 * `rowFilter` adds conditions on the rollup rows (day pruning, start time, trace id), in a subquery
 * of its own so that its columns are the table's, not the merged figures of the same name.
 */
export function traceFiguresSql(rowFilter: string): string {
  return `
    SELECT
      trace_id, start_time, end_time, root_span_id, root_name, root_type, session_id, user_id, run_id, service_name,
      models, tools_used, span_types, llm_spans,
      toString(toUnixTimestamp64Nano(start_time)) AS start_ns,
      (toUnixTimestamp64Nano(end_time) - toUnixTimestamp64Nano(start_time)) / 1e6 AS duration_ms,
      if(isNotNull(stated_iterations), assumeNotNull(stated_iterations),
         if(agent_children > 0, agent_children, toInt64(arrayCount(l -> l.3 = 0, llm_spans)))) AS iterations,
      arraySum(usage.2) AS cost_usd,
      arraySum(usage.3) + arraySum(usage.4) + arraySum(usage.5) AS input_tokens,
      arraySum(usage.6) + arraySum(usage.7) AS output_tokens,
      length(error_span_ids) AS error_count,
      length(llm_spans) AS llm_calls,
      retention_days
    FROM (
      SELECT
        trace_id,
        min(start_time) AS start_time,
        max(end_time) AS end_time,
        max(root_span_id) AS root_span_id,
        max(root_name) AS root_name,
        max(root_type) AS root_type,
        max(root_iterations) AS stated_iterations,
        max(session_id) AS session_id,
        max(user_id) AS user_id,
        max(run_id) AS run_id,
        max(service_name) AS service_name,
        groupUniqArrayArray(models) AS models,
        groupUniqArrayArray(tools_used) AS tools_used,
        groupUniqArrayArray(span_types) AS span_types,
        groupUniqArrayArray(llm_spans) AS llm_spans,
        toInt64(arrayCount(a -> a.2 = root_span_id, groupUniqArrayArray(agent_spans))) AS agent_children,
        groupUniqArrayArray(error_span_ids) AS error_span_ids,
        maxMap(usage) AS usage,
        max(retention_days) AS retention_days
      FROM (SELECT * FROM traces WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${rowFilter})
      GROUP BY trace_id
    )`;
}

/** One row of traceFiguresSql as JSON. */
export interface TraceFiguresRow {
  trace_id: string;
  start_time: string;
  /** start_time in nanoseconds since the epoch, as text (it does not fit a JS number). */
  start_ns: string;
  end_time: string;
  root_span_id: string;
  root_name: string;
  root_type: string;
  session_id: string;
  user_id: string;
  run_id: string;
  service_name: string;
  models: string[];
  tools_used: string[];
  span_types: string[];
  llm_spans: Array<[string, string, number, string]>;
  duration_ms: number;
  iterations: number;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  error_count: number;
  llm_calls: number;
}

/**
 * For the upkeep's INSERT … SELECT into tables partitioned by month (cost_minute, cost_daily):
 * a round may cover traces of more than 100 months (one export may carry spans from any time in
 * the accepted range), and it writes a few rows per trace, not a part explosion.
 */
const ANY_PARTITIONS = '\n  SETTINGS max_partitions_per_insert_block = 0';

/** Each span of the traces `spanFilter` picks once, as its newest copy (SPAN_COPY_KEY), with the columns the cost rows need. */
function newestSpanCopiesSql(spanFilter: string): string {
  return `
        SELECT trace_id, argMax(toString(model), ingested_at) AS span_model, argMax(toString(provider), ingested_at) AS span_provider,
          argMax(toString(span_type), ingested_at) AS span_kind, argMax(toString(service_name), ingested_at) AS span_service,
          argMax(cost_usd, ingested_at) AS span_cost, argMax(input_tokens, ingested_at) AS span_input,
          argMax(output_tokens, ingested_at) AS span_output, argMax(usage_is_aggregate, ingested_at) AS span_is_aggregate
        FROM spans
        WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${spanFilter}
        GROUP BY ${SPAN_COPY_KEY}`;
}

/**
 * Recomputes trace_figures rows (005_trace_and_session_figures.sql): the figures from the rollup,
 * and the per-(model, provider, type, service) cost rows from the traces' spans (each span once).
 * `spanFilter` restricts the spans read to the same traces as `rowFilter` (by day and id).
 * `computedAt` is the rows' version (the newest wins): the time of the reads their bounds come from.
 */
function refreshTraceFiguresSql(rowFilter: string, spanFilter: string, outerFilter = '', computedAt = 'now64(6)', withClause = ''): string {
  return `
  INSERT INTO trace_figures (tenant_id, project_id, trace_id, start_time, end_time, duration_ms, root_name, session_id, user_id, run_id,
    service_name, iterations, cost_usd, input_tokens, output_tokens, error_count, llm_calls, models, tools_used, cost_rows, computed_at,
    retention_days)
  ${withClause}SELECT {tenantId:String}, {projectId:String}, f.trace_id, f.start_time, f.end_time, f.duration_ms, f.root_name, f.session_id, f.user_id,
    f.run_id, f.service_name, f.iterations, f.cost_usd, f.input_tokens, f.output_tokens, f.error_count, f.llm_calls, f.models, f.tools_used,
    c.cost_rows, ${computedAt}, f.retention_days
  FROM (${traceFiguresSql(rowFilter)}) AS f
  LEFT JOIN (
    SELECT trace_id, groupArray((model, provider, span_type, service, cost, input, output, n)) AS cost_rows
    FROM (
      SELECT trace_id, span_model AS model, span_provider AS provider, span_kind AS span_type, span_service AS service,
        sum(span_cost) AS cost, sum(span_input) AS input, sum(span_output) AS output, toUInt32(count()) AS n
      FROM (${newestSpanCopiesSql(spanFilter)})
      WHERE span_is_aggregate = 0
      GROUP BY trace_id, model, provider, span_type, service)
    GROUP BY trace_id) AS c ON c.trace_id = f.trace_id${outerFilter}${ANY_PARTITIONS}`;
}

/** Recomputes the figures of every trace that starts on one day (bulk loads; a trace may run into the next day). */
export const REFRESH_DAY_TRACE_FIGURES_SQL = refreshTraceFiguresSql(
  // From the day before: a trace that started then and runs into this day is read whole, and left
  // out by its true start (it was written with the day before).
  ' AND day BETWEEN {day:Date} - 1 AND {day:Date} + 1',
  ' AND toDate(start_time) BETWEEN {day:Date} - 1 AND {day:Date} + 1',
  ' WHERE toDate(f.start_time) = {day:Date}',
);

/**
 * A round's traces are read in groups of like time (docs/architecture.md, "Groups of like time"):
 * each group's rows within the time of its own traces, so that a few traces of long ago (late spans
 * of an old trace) do not widen the time every other trace of the round is read in, which would
 * read the project's every day between. Group i's ids are the parameter `traceIds<i>`; a statement
 * over `groups` groups has one branch per group, OR'ed, each a condition the engine reads as key
 * and part ranges.
 */
const groupIdsSql = (i: number) => `{traceIds${i}:Array(String)}`;

/**
 * One read of trace_index for all the traces of the groups ({traceIds}: every group's, in the order
 * the caller gives; a round that refreshes the traces it looked for, in the order it looked for
 * them, so carries its look's own condition, whose granules that matched nothing the engine
 * remembers and skips), as `stored_times`: for each row of theirs, its
 * trace's group ({traceGroups}: each trace's group, from 1), its first start and its last end, as
 * three arrays. A primary-key lookup, named once in the statement's WITH (the ids written in once,
 * not at every use); each group's bounds are folded from its answer into constants the engine
 * reads key ranges from, in the statement and in its subqueries. A statement using
 * storedTracesTimeSql starts with it. No GROUP BY: a read grouped in the same statement as its
 * filter did not use the remembered granules (35–37 ms against 20–22 at 10M spans, a probe in
 * session 47).
 */
export const STORED_TIMES_WITH_SQL = `WITH (SELECT (groupArray(transform(trace_id, {traceIds:Array(String)}, {traceGroups:Array(UInt32)}, toUInt32(0))),
        groupArray(start_time), groupArray(end_time))
      FROM trace_index
      WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}) AS stored_times
  `;

/**
 * The parameters of a statement over these groups of trace ids bounded by what trace_index holds
 * of them (storedTracesTimeSql, filedMinutesSql): each group's ids, and every id with its group's
 * number (from 1), in the order of `order` (every id of the groups, each once).
 */
export function storedTracesParams(groups: string[][], order: string[] = groups.flat()): Record<string, Array<string | number>> {
  const numberOf = new Map(groups.flatMap((traceIds, i) => traceIds.map((traceId): [string, number] => [traceId, i + 1])));
  return {
    traceIds: order,
    traceGroups: order.map((traceId) => {
      const group = numberOf.get(traceId);
      if (group === undefined) throw new Error(`trace ${traceId} is in no group of the statement`);
      return group;
    }),
    ...Object.fromEntries(groups.map((traceIds, i) => [`traceIds${i}`, traceIds])),
  };
}

/** The first start of group i's spans, as trace_index knows them (1970 for a group with none). */
const storedFirstStartSql = (i: number) =>
  `arrayMin(arrayFilter((row_time, row_group) -> row_group = ${i + 1}, tupleElement(stored_times, 2), tupleElement(stored_times, 1)))`;

/** The last end of group i's spans, as trace_index knows them. */
const storedLastEndSql = (i: number) =>
  `arrayMax(arrayFilter((row_time, row_group) -> row_group = ${i + 1}, tupleElement(stored_times, 3), tupleElement(stored_times, 1)))`;

/** Group i's time as the round's look found it ({from<i>}, {to<i>}). */
const lookedFromSql = (i: number) => `{from${i}:DateTime64(9, 'UTC')}`;
const lookedToSql = (i: number) => `{to${i}:DateTime64(9, 'UTC')}`;

/**
 * The branches of `groups` groups, OR'ed, in parentheses; one group's branch as it is, so that its
 * conditions stay conjuncts of the statement's own (each can move to PREWHERE on its own).
 */
function anyGroup(groups: number, branch: (i: number) => string): string {
  const branches = eachGroup(groups, branch);
  return branches.length === 1 ? branches[0]! : `(${branches.map((b) => `(${b})`).join('\n    OR ')})`;
}

/** `branch(i)` of each of `groups` groups. */
function eachGroup(groups: number, branch: (i: number) => string): string[] {
  if (groups < 1) throw new Error('a statement over groups of traces needs at least one group');
  return Array.from({ length: groups }, (_, i) => branch(i));
}

/**
 * Rows of the groups' traces within the time their spans cover, from the first start to the last
 * end, as trace_index holds them when the statement runs: every span of those traces starts in it
 * (a span never ends before it starts: the gateway refuses one). trace_index is written by the same
 * insert as the spans, so it covers every span stored, and a trace that runs for days is read whole
 * even when only its newest spans came in. Each part knows the range of its rows' starts, so the
 * engine skips the parts that hold none of them: under ingest, the merged parts of older spans. A
 * round then reads what its traces' time holds instead of every granule of the day (their ids are
 * random). With `dayColumn`, the table is filed by day too (the traces rollup; its minmax index on
 * the start skips the granules of older traces, 023): the same lookup bounds its days. The
 * statement starts with STORED_TIMES_WITH_SQL.
 */
export function storedTracesTimeSql(groups: number, dayColumn?: string): string {
  return groupsWithinSql(groups, storedFirstStartSql, storedLastEndSql, dayColumn);
}

/**
 * storedTracesTimeSql for traces a round looked at: each group's time as the look found it, passed
 * as parameters instead of read again. A statement bounded by it must be versioned by the look's
 * time ({lookedAt}), not its own: spans stored after the look may lie outside it, and only a
 * computation from a later look (which sees them) may replace one from this look
 * (docs/architecture.md, "One look a round").
 */
export function lookedTracesTimeSql(groups: number, dayColumn?: string): string {
  return groupsWithinSql(groups, lookedFromSql, lookedToSql, dayColumn);
}

/** Each group's rows (its ids) within its time, from `from(i)` to `to(i)`, and with `dayColumn` within its days. */
function groupsWithinSql(groups: number, from: (i: number) => string, to: (i: number) => string, dayColumn?: string): string {
  return anyGroup(
    groups,
    (i) =>
      `${dayColumn ? `${dayColumn} BETWEEN toDate(${from(i)}) AND toDate(${to(i)}) AND ` : ''}` +
      `start_time BETWEEN ${from(i)} AND ${to(i)} AND trace_id IN ${groupIdsSql(i)}`,
  );
}

/** The look's time as a version (lookedTracesTimeSql). */
const LOOKED_AT_SQL = `{lookedAt:DateTime64(6, 'UTC')}`;

/** Recomputes the trace_figures rows of some traces of one project, in groups, bounded by what trace_index holds of them now. */
export function refreshStoredTraceFiguresSql(groups: number): string {
  return refreshTraceFiguresSql(
    ` AND ${storedTracesTimeSql(groups, 'day')}`,
    ` AND ${storedTracesTimeSql(groups)}`,
    '',
    'now64(6)',
    STORED_TIMES_WITH_SQL,
  );
}

/** refreshStoredTraceFiguresSql for traces a round looked at: each group bounded by its look, versioned by the look's time. */
export function refreshLookedTraceFiguresSql(groups: number): string {
  return refreshTraceFiguresSql(` AND ${lookedTracesTimeSql(groups, 'day')}`, ` AND ${lookedTracesTimeSql(groups)}`, '', LOOKED_AT_SQL);
}

/**
 * Recomputes session_figures rows: the figures from the sessions rollup, and per score name the
 * session's feedback (count, sum and count of numeric values, so means are exact) on the traces
 * the rollup lists for the session (the same traces its trace count counts). `sessionFilter` picks
 * the sessions (it must keep the scope). Both reads of the rollup are lookups by session id: the
 * feedback join's right side is those sessions' (session, trace) pairs, and the project's feedback,
 * read whole, is matched against them.
 */
export function refreshSessionFiguresSql(sessionFilter: string): string {
  return `
  INSERT INTO session_figures (tenant_id, project_id, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id,
    feedback, computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, s.session_id, s.trace_count, arraySum(s.u.2), arraySum(s.u.3) + arraySum(s.u.4) + arraySum(s.u.5),
    arraySum(s.u.6) + arraySum(s.u.7), s.first_seen, s.last_seen, s.user_id, fb.feedback, now64(6), s.retention_days
  FROM (
    SELECT session_id, length(groupUniqArrayArray(trace_ids)) AS trace_count, maxMap(usage) AS u, min(first_seen) AS first_seen,
      max(last_seen) AS last_seen, max(user_id) AS user_id, max(retention_days) AS retention_days
    FROM sessions
    WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${sessionFilter}
    GROUP BY session_id) AS s
  LEFT JOIN (
    SELECT session_id, groupArray((name, n, total, numeric)) AS feedback
    FROM (
      SELECT t.trace_session AS session_id, f.name AS name, toUInt32(count()) AS n, sum(ifNull(f.value_number, 0)) AS total,
        toUInt32(countIf(isNotNull(f.value_number))) AS numeric
      FROM (SELECT trace_id, name, value_number FROM feedback FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}) AS f
      INNER JOIN (SELECT session_id AS trace_session, arrayJoin(groupUniqArrayArray(trace_ids)) AS trace_id FROM sessions
                  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${sessionFilter} GROUP BY session_id) AS t
      ON f.trace_id = t.trace_id
      GROUP BY session_id, name)
    GROUP BY session_id) AS fb ON fb.session_id = s.session_id`;
}

/**
 * Recomputes the session_figures rows of some sessions ({sessions:Array(String)}): the worker's
 * round knows them from its inserts and its look at the stored traces, an erasure from the traces
 * it erases.
 */
export const REFRESH_SESSIONS_FIGURES_SQL = refreshSessionFiguresSql(' AND session_id IN {sessions:Array(String)}');

/**
 * Recomputes the session_figures rows of the sessions these traces belong to ({traceIds}: a few
 * traces given feedback; a lookup of random trace ids reads every granule of trace_index it hits).
 */
export const REFRESH_SESSION_FIGURES_SQL = refreshSessionFiguresSql(
  ` AND session_id IN (SELECT session_id FROM trace_index
                       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)} AND session_id != '')`,
);

/** Recomputes every session of a project (bulk loads). */
export const REFRESH_ALL_SESSION_FIGURES_SQL = refreshSessionFiguresSql('');

/**
 * Cost rows summed per key of a rollup of costs (cost_minute, cost_daily) for some periods:
 * `sources` answers rows (period, model, provider, span_type, service, cost, input, output, n,
 * retention) to sum. Every key already stored for those periods (`storedKeys`, the target table's
 * rows of them) is written again too, at zero when no source row has it any more (its only trace now
 * starts earlier), so a recomputation also takes away what no longer belongs to a period; readers
 * skip keys with no spans.
 */
function refreshCostsSql(table: 'cost_minute' | 'cost_daily', period: 'minute' | 'day', sources: string, storedKeys: string): string {
  return `
  INSERT INTO ${table} (tenant_id, project_id, ${period}, model, provider, span_type, service, cost_usd, input_tokens, output_tokens, spans,
    computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, p, model, provider, span_type, service, sum(cost), sum(input), sum(output), sum(n), now64(6), max(retention)
  FROM (${sources}
    UNION ALL
    SELECT ${period}, toString(model), toString(provider), toString(span_type), toString(service), toFloat64(0), toUInt64(0), toUInt64(0),
      toUInt64(0), retention_days
    FROM ${table} FINAL
    WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND ${storedKeys})
  GROUP BY p, model, provider, span_type, service${ANY_PARTITIONS}`;
}

/** Some minutes ({minutes:Array(Int64)}, ms), as a condition on a `minute` column (the engine reads it as key ranges). */
const MINUTES = 'toUnixTimestamp64Milli(minute) IN {minutes:Array(Int64)}';

/**
 * Recomputes cost_minute (022_minute_filings.sql) for some minutes of one project ({minutes}: those
 * a round touched, an erasure's, or every minute of a bulk load's days) from trace_minutes, which
 * files each trace's cost rows under the minute it starts in: the statement reads the traces of
 * those minutes.
 */
export const REFRESH_COST_MINUTE_SQL = refreshCostsSql(
  'cost_minute',
  'minute',
  `
    SELECT t.minute AS p, toString(r.model) AS model, toString(r.provider) AS provider, toString(r.span_type) AS span_type,
      toString(r.service) AS service, toFloat64(r.cost_usd) AS cost, toUInt64(r.input_tokens) AS input, toUInt64(r.output_tokens) AS output,
      toUInt64(r.spans) AS n, t.retention_days AS retention
    FROM (SELECT minute, cost_rows, retention_days FROM trace_minutes FINAL
          WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND ${MINUTES}) AS t
    ARRAY JOIN t.cost_rows AS r`,
  MINUTES,
);

/** The minutes of some UTC days ({days:Array(Date)}), as a condition on a `minute` column. */
const MINUTES_OF_DAYS = 'toDate(minute) IN {days:Array(Date)}';

/**
 * Recomputes cost_daily (007_cost_daily.sql) for some days of one project ({days:Array(Date)})
 * from their minutes in cost_minute: at most 1,440 rows per key and day, however many traces the
 * day holds. The minutes must be current (REFRESH_COST_MINUTE_SQL first).
 */
export const REFRESH_COST_DAILY_SQL = refreshCostsSql(
  'cost_daily',
  'day',
  `
    SELECT toDate(c.minute) AS p, toString(c.model) AS model, toString(c.provider) AS provider, toString(c.span_type) AS span_type,
      toString(c.service) AS service, c.cost_usd AS cost, c.input_tokens AS input, c.output_tokens AS output, c.spans AS n,
      c.retention_days AS retention
    FROM (SELECT * FROM cost_minute FINAL
          WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND ${MINUTES_OF_DAYS}) AS c`,
  'day IN {days:Array(Date)}',
);

/**
 * Every minute some traces (in groups, storedTracesTimeSql) are filed under in trace_minutes, read
 * after their figures are refreshed: whether the newest row there still holds the trace
 * (`present`), and that row's stamp (`stamp`, the computation's computed_at, or the stamp of the
 * empty row that took the trace out). Of a trace's minutes that hold it, the one with the newest
 * stamp is where its newest computation filed it; every other holds an older computation's filing
 * (a minute the trace left, or the filing of a computation that another round's has since
 * superseded) and is emptied with the newest's stamp. trace_minutes rows are never merged across
 * minutes, so every filing stays to be read. Every minute a trace was ever filed under lies in the
 * time its spans cover (each filing was the first start of spans still stored; trace_index keeps
 * the earliest start even of a span stored again with a later one), read from trace_index as the
 * statement runs: a later computation's filing is seen even when it starts before the round's
 * look. Each group is read by a select of its own, the selects' answers put together (a trace is in
 * one group): a group of a few traces that run for days (a long agent run's) reads the granules of
 * those days whose bloom filter on the trace id (031) says they may hold one of its ids, not every
 * filing of those days. One condition OR'ed over the groups would not skip them: an index skips
 * granules by the whole condition, and the round's other group, of hundreds of ids, matches nearly
 * every granule's filter. A group of hundreds of ids reads every filing of its minutes, as before.
 * docs/architecture.md, "Groups of like time".
 */
export function filedMinutesSql(groups: number): string {
  const group = (i: number) => `SELECT trace_id, toUnixTimestamp64Milli(minute) AS minute_ms, argMax(present, computed_at) AS present,
    toString(max(computed_at)) AS stamp
  FROM trace_minutes
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
    AND minute BETWEEN toStartOfMinute(${storedFirstStartSql(i)}) AND ${storedLastEndSql(i)} AND trace_id IN ${groupIdsSql(i)}
  GROUP BY trace_id, minute`;
  return `
  ${STORED_TIMES_WITH_SQL}${eachGroup(groups, group).join('\n  UNION ALL\n  ')}`;
}

/**
 * An empty trace_minutes row (present = 0, no cost rows) for each trace ({vacatedTraces}) under a
 * minute an older computation filed it under ({vacatedMinutes}, ms, the same order), stamped with
 * the trace's newest computation's ({vacatedStamps}; filedMinutesSql): it replaces any filing
 * there but a newer one. It takes the retention of the row it empties, so the two share a
 * partition and it replaces it.
 */
export const VACATE_TRACE_MINUTES_SQL = `
  INSERT INTO trace_minutes (tenant_id, project_id, minute, trace_id, start_time, duration_ms, root_name, service_name, iterations, cost_usd,
    input_tokens, output_tokens, error_count, cost_rows, present, computed_at, retention_days)
  SELECT {tenantId:String}, {projectId:String}, v.minute, v.trace_id, v.minute, 0, '', '', 0, 0, 0, 0, 0, [], 0, v.stamp, ifNull(r.retention_days, 0)
  FROM (SELECT tupleElement(p, 1) AS trace_id, fromUnixTimestamp64Milli(tupleElement(p, 2), 'UTC') AS minute, tupleElement(p, 3) AS stamp
        FROM (SELECT arrayJoin(arrayZip({vacatedTraces:Array(String)}, {vacatedMinutes:Array(Int64)},
                                        {vacatedStamps:Array(DateTime64(6, 'UTC'))})) AS p)) AS v
  LEFT JOIN (SELECT trace_id, minute, max(retention_days) AS retention_days FROM trace_minutes
             WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {vacatedTraces:Array(String)}
               AND toUnixTimestamp64Milli(minute) IN {vacatedMinutes:Array(Int64)}
             GROUP BY trace_id, minute) AS r ON r.trace_id = v.trace_id AND r.minute = v.minute${ANY_PARTITIONS}`;
