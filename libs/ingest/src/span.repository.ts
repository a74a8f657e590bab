import {
  REFRESH_COST_DAILY_SQL,
  REFRESH_COST_MINUTE_SQL,
  REFRESH_SESSIONS_FIGURES_SQL,
  REFRESH_TRACE_METRICS_HOUR_SQL,
  REFRESH_TRACE_METRICS_MINUTE_SQL,
  SPAN_COPY_KEY,
  VACATE_TRACE_MINUTES_SQL,
  filedMinutesSql,
  lookedTracesTimeSql,
  refreshLookedTraceFiguresSql,
  refreshStoredTraceFiguresSql,
  storedTracesParams,
  storedTracesTimeSql,
  STORED_TIMES_WITH_SQL,
  insertLines,
  namedStatement,
  withProjectFilters,
  type ClickHouseClient,
} from '@spanforge/clickhouse';
import { GEN_AI_TRACE_TYPES, ROOT_UPGRADABLE_TYPES } from '@spanforge/semconv';

export interface AccountingRow {
  tenant_id: string;
  project_id: string;
  /** Start of the minute, seconds since the epoch. */
  minute: number;
  outcome: string;
  reason: string;
  batch_id: string;
  requests: number;
  spans: number;
  bytes: number;
}

/**
 * A minute a trace is filed under in trace_minutes (filedMinutesSql): the UTC minute (ms) of its
 * start by some computation, which the daily costs and trace metrics are recomputed from and the
 * `metrics` query reads traces by; whether the newest row there still holds the trace; and that
 * row's stamp (computed_at as text).
 */
export interface FiledMinute {
  traceId: string;
  minuteMs: number;
  present: boolean;
  stamp: string;
}

/** The UTC days (YYYY-MM-DD) of some minutes (ms). */
export function daysOf(minutes: number[]): string[] {
  return [...new Set(minutes.map((minute) => new Date(minute).toISOString().slice(0, 10)))];
}

/** The UTC hours (ms) of some minutes (ms). */
export function hoursOf(minutes: number[]): number[] {
  return [...new Set(minutes.map((minute) => minute - (minute % 3_600_000)))];
}

export interface StoredTrace {
  sessionId: string;
  hasSessionless: boolean;
  /** Its root is stored with a type that becomes RUN in a GenAI trace, and its spans show it is one. */
  rootToRun: boolean;
  /**
   * When the trace was erased before these spans were stored (a late span, or a back-fill read
   * before the erasure): the erasure job to run again, and every session its stored rows name.
   */
  erased?: Tombstone;
}

/**
 * Some traces a look found, and the time their stored spans cover, from the first start to the last
 * end (DateTime64 text, as the engine writes it): one group of lookGroups.
 */
export interface LookedGroup {
  from: string;
  to: string;
  traceIds: string[];
}

/**
 * A round's look at trace_index (SpanRepository.storedTraces): the engine's clock when it read, and
 * the traces it found in groups of like time (lookGroups). The round's reads of its traces' rows are
 * bounded by each group's time, and its trace figures refresh takes those bounds from the look
 * instead of reading trace_index again, and is stamped with its time (docs/architecture.md, "One look
 * a round" and "Groups of like time").
 */
export interface TraceLook {
  at: string;
  groups: LookedGroup[];
}

/** At most this many groups a look (lookGroups): each is a branch of the conditions of the round's statements. */
export const MAX_LOOK_GROUPS = 16;

/** The engine's 'YYYY-MM-DD hh:mm:ss.nnnnnnnnn' (UTC) in ms since the epoch. */
const engineTimeMs = (time: string): number => Date.parse(`${time.slice(0, 10)}T${time.slice(11, 23)}Z`);

/**
 * The traces a look found, in groups of like time: traces whose stored spans start on the same UTC
 * day and end on the same UTC day share a group, bounded by their earliest start and latest end.
 * A round of live traces is one group (two or three around midnight); the late span of a trace of
 * last month, or a trace that runs for days, is a group of its own, read in its own time instead of
 * widening the others'. Groups are by day, not finer: the spans and the traces rollup are sorted
 * by day, then by random trace id, so a group's cost is about its days' granules its ids touch,
 * and every group is a branch more of each statement's condition, evaluated on every row read
 * (a first version with hourly groups, each looking its bounds up on its own, made the figures
 * step of a round scattered over 20 hours four times as costly: BENCHMARKS.md, "Upkeep at scale",
 * session 47). Past MAX_LOOK_GROUPS, the two neighbours (in order of first start) whose joined time
 * is shortest are joined, until that many are left.
 */
export function lookGroups(found: ReadonlyArray<{ traceId: string; firstStart: string; lastEnd: string }>): LookedGroup[] {
  const byDays = new Map<string, LookedGroup>();
  for (const { traceId, firstStart, lastEnd } of found) {
    // Fixed-width 'YYYY-MM-DD hh:mm:ss.nnnnnnnnn': text order is time order, and the first 10 characters are the day.
    const key = `${firstStart.slice(0, 10)} ${lastEnd.slice(0, 10)}`;
    const group = byDays.get(key);
    if (!group) byDays.set(key, { from: firstStart, to: lastEnd, traceIds: [traceId] });
    else {
      if (firstStart < group.from) group.from = firstStart;
      if (lastEnd > group.to) group.to = lastEnd;
      group.traceIds.push(traceId);
    }
  }
  const groups = [...byDays.values()].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  while (groups.length > MAX_LOOK_GROUPS) {
    const joinedMs = (i: number) =>
      engineTimeMs(groups[i]!.to > groups[i + 1]!.to ? groups[i]!.to : groups[i + 1]!.to) - engineTimeMs(groups[i]!.from);
    let shortest = 0;
    for (let i = 1; i + 1 < groups.length; i++) if (joinedMs(i) < joinedMs(shortest)) shortest = i;
    const [first, second] = [groups[shortest]!, groups[shortest + 1]!];
    groups.splice(shortest, 2, {
      from: first.from,
      to: first.to > second.to ? first.to : second.to,
      traceIds: [...first.traceIds, ...second.traceIds],
    });
  }
  return groups;
}

/** lookGroups of trace_index's answer of some traces' times (STORED_TRACES_INDEX_SQL, TRACE_TIMES_SQL). */
const groupsOfTimes = (rows: ReadonlyArray<{ trace_id: string; first_start: string; last_end: string }>): LookedGroup[] =>
  lookGroups(rows.map((r) => ({ traceId: r.trace_id, firstStart: r.first_start, lastEnd: r.last_end })));

/**
 * Some traces in a look's groups: each group with only those of its traces among them (its time
 * still the whole group's: wider is safe), and the traces the look did not find (one group more,
 * read in one range). Within each, the traces keep the order they are given in, not the look's
 * answer's: a round refreshing the traces it looked for, in the order it looked for them, then
 * looks them up in trace_index with the same condition as its look, whose granules that matched
 * nothing the engine remembers (the query condition cache) and skips.
 */
function withinLook(groups: LookedGroup[] | undefined, traceIds: string[]): InGroups {
  const groupOf = new Map<string, number>();
  groups?.forEach((group, i) => group.traceIds.forEach((traceId) => groupOf.set(traceId, i)));
  const ids = (groups ?? []).map((): string[] => []);
  const unlooked: string[] = [];
  const all = [...new Set(traceIds)];
  for (const traceId of all) {
    const i = groupOf.get(traceId);
    if (i === undefined) unlooked.push(traceId);
    else ids[i]!.push(traceId);
  }
  const looked = (groups ?? []).map((group, i) => ({ ...group, traceIds: ids[i]! })).filter((group) => group.traceIds.length > 0);
  return { all, looked, unlooked };
}

/** Some traces (`all`, in the order given) in a look's groups (withinLook). */
interface InGroups {
  all: string[];
  looked: LookedGroup[];
  unlooked: string[];
}

/** Groups of trace ids: a look's, and one more of the traces it did not find. */
function idGroups({ looked, unlooked }: InGroups): string[][] {
  return [...looked.map((group) => group.traceIds), ...(unlooked.length > 0 ? [unlooked] : [])];
}

/** storedTracesParams of some traces in a look's groups. */
const groupParams = (grouped: InGroups) => storedTracesParams(idGroups(grouped), grouped.all);

/** The parameters of a statement bounded by a look's groups (lookedTracesTimeSql): each group's ids and time. */
function lookedGroupParams(groups: LookedGroup[]): Record<string, string | string[]> {
  return Object.fromEntries(
    groups.flatMap((group, i) => [
      [`from${i}`, group.from],
      [`to${i}`, group.to],
      [`traceIds${i}`, group.traceIds],
    ]),
  );
}

/** What a round's look found: the stored traces by id, and the look (undefined when it found none). */
export interface StoredTraces {
  traces: Map<string, StoredTrace>;
  look?: TraceLook;
}

/** An erased trace's tombstone as the upkeep uses it: the erasure job, and the sessions to rebuild without the trace. */
export interface Tombstone {
  jobId: string;
  sessions: string[];
}

export interface ProjectRef {
  tenantId: string;
  projectId: string;
}

/**
 * What trace_index holds of some traces: session, sessionless spans, and the time their spans
 * cover; and for those erased before (a tombstone), the erasure job and every session they name.
 * The tombstones of these ids are one small read of erased_traces by its key (a join with the
 * project's tombstones instead measured no cheaper, and grows with how many it has).
 */
const STORED_TRACES_INDEX_SQL = `WITH (SELECT (groupArray(trace_id), groupArray(job_id)) FROM (
      SELECT trace_id, argMax(job_id, erased_at) AS job_id FROM erased_traces
      WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}
      GROUP BY trace_id)) AS erased
  SELECT trace_id, max(session_id) AS session_id, max(has_sessionless) AS has_sessionless,
    min(start_time) AS first_start, max(end_time) AS last_end, now64(6, 'UTC') AS looked_at, arrayElement(erased.2, indexOf(erased.1, trace_id)) AS erased_by,
    if(erased_by = '', [], groupUniqArrayIf(i.session_id, i.session_id != '')) AS erased_sessions
  FROM trace_index AS i
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}
  GROUP BY trace_id`;

/** The time some traces' stored spans cover, per trace, as trace_index holds it: a primary-key lookup. */
const TRACE_TIMES_SQL = `SELECT trace_id, min(start_time) AS first_start, max(end_time) AS last_end
  FROM trace_index
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}
  GROUP BY trace_id`;

/**
 * Which of some traces, in `groups` groups of a look (lookedTracesTimeSql), have a root stored with
 * a type that becomes RUN ({upgradable}, or any type for {plainRoots}) and GenAI spans.
 */
const rootsToRunSql = (groups: number) => `SELECT trace_id
  FROM traces
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
    AND ${lookedTracesTimeSql(groups, 'day')}
  GROUP BY trace_id
  HAVING max(root_span_id) != ''
    AND (has({upgradable:Array(String)}, max(root_type)) OR has({plainRoots:Array(String)}, trace_id))
    AND hasAny(groupUniqArrayArray(span_types), {genAiTypes:Array(String)})`;

/** In rewrittenSpanLines, over a span and its trace: the root of a GenAI trace, stored with a type that becomes RUN. */
const ROOT_TO_RUN = "parent_span_id = '' AND gen_ai_trace AND has({upgradable:Array(String)}, toString(span_type))";

/** All SQL of the ingest write path. Every statement is bound to one tenant and project. */
export class SpanRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /** Inserts rows already serialised as JSONEachRow lines (UTF-8, one a row), as one insert. */
  async insertSpanLines(lines: Uint8Array[]): Promise<void> {
    await insertLines(this.client, 'INSERT INTO spans FORMAT JSONEachRow', lines, 'ingest.insert_spans');
  }

  async insertAccounting(rows: AccountingRow[]): Promise<void> {
    await this.client.insert({
      table: 'ingest_accounting',
      values: rows,
      format: 'JSONEachRow',
      ...namedStatement('ingest.insert_accounting'),
    });
  }

  /**
   * Which of these traces were erased (their tombstones), with the job and the session the trace
   * had when it was erased: for traces a round does not look at in trace_index (its back-fill's).
   */
  async erasedTraces(project: ProjectRef, traceIds: string[]): Promise<Map<string, Tombstone>> {
    if (traceIds.length === 0) return new Map();
    return this.tombstones(project, 'trace_id IN {traceIds:Array(String)}', { traceIds }, 'ingest.erased_traces');
  }

  /**
   * The project's traces erased within the last `withinSeconds` (by the engine's clock), with
   * their jobs: a round's check at its end for traces erased while it ran, without sending the
   * round's ids (the project's recent tombstones are few; the caller matches them).
   */
  async recentlyErased(project: ProjectRef, withinSeconds: number): Promise<Map<string, Tombstone>> {
    return this.tombstones(
      project,
      'erased_at >= now64(3) - toIntervalSecond({withinSeconds:UInt32})',
      { withinSeconds: Math.ceil(withinSeconds) },
      'ingest.recently_erased',
    );
  }

  /** The project's tombstones that meet `condition` (constant SQL over bound `params`), by trace. */
  private async tombstones(
    project: ProjectRef,
    condition: string,
    params: Record<string, unknown>,
    name: string,
  ): Promise<Map<string, Tombstone>> {
    const result = await this.client.query({
      query: withProjectFilters(
        `SELECT trace_id, argMax(job_id, erased_at) AS job_id, argMax(session_id, erased_at) AS session_id FROM erased_traces
         WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND ${condition}
         GROUP BY trace_id`,
        project,
      ),
      query_params: { ...project, ...params },
      format: 'JSONEachRow',
      ...namedStatement(name),
    });
    const rows = await result.json<{ trace_id: string; job_id: string; session_id: string }>();
    return new Map(rows.map((r) => [r.trace_id, { jobId: r.job_id, sessions: r.session_id === '' ? [] : [r.session_id] }]));
  }

  /**
   * What is stored of these traces: their session ('' if none yet), whether any span of them lacks
   * one, and whether their root still has to become RUN.
   *
   * Two statements. The first reads trace_index by the traces' ids once, with the time their stored
   * spans cover. The second reads the traces rollup within that time, each group of like time
   * (lookGroups) within its own (its days and its minmax index on the start skip older traces'
   * granules): the rollup's root type is the greatest stored, and RUN
   * sorts after every upgradable type, so a root already written again as RUN is not picked again —
   * unless `plainRoots` says a copy typed otherwise was just written (a retried export): that copy is
   * now the stored one, and the rollup cannot tell. One statement with the time as subqueries read
   * trace_index three times; a lookup of a round's random ids there reads a granule per id, so in a
   * large project that was most of the statement's cost (docs/scaling.md). A span stored between the
   * two statements is its own round's to look at: every round looks after its insert. The look
   * (its time, and the traces in groups of like time with their bounds) is answered too, for the
   * round's other statements.
   */
  async storedTraces(project: ProjectRef, traceIds: string[], plainRoots: string[]): Promise<StoredTraces> {
    if (traceIds.length === 0) return { traces: new Map() };
    const indexed = await this.client.query({
      query: withProjectFilters(STORED_TRACES_INDEX_SQL, project),
      query_params: { ...project, traceIds },
      format: 'JSONEachRow',
      ...namedStatement('ingest.stored_traces'),
    });
    const found = await indexed.json<{
      trace_id: string;
      session_id: string;
      has_sessionless: number;
      first_start: string;
      last_end: string;
      looked_at: string;
      erased_by: string;
      erased_sessions: string[];
    }>();
    if (found.length === 0) return { traces: new Map() };
    const look: TraceLook = {
      at: found[0]!.looked_at,
      groups: groupsOfTimes(found),
    };
    const roots = await this.client.query({
      query: withProjectFilters(rootsToRunSql(look.groups.length), project),
      query_params: {
        ...project,
        ...lookedGroupParams(look.groups),
        plainRoots,
        upgradable: ROOT_UPGRADABLE_TYPES,
        genAiTypes: GEN_AI_TRACE_TYPES,
      },
      format: 'JSONEachRow',
      ...namedStatement('ingest.roots_to_run'),
    });
    const toRun = new Set((await roots.json<{ trace_id: string }>()).map((r) => r.trace_id));
    const traces = new Map(
      found.map((r) => [
        r.trace_id,
        {
          sessionId: r.session_id,
          hasSessionless: Number(r.has_sessionless) === 1,
          rootToRun: toRun.has(r.trace_id),
          ...(r.erased_by ? { erased: { jobId: r.erased_by, sessions: r.erased_sessions } } : {}),
        },
      ]),
    );
    return { traces, look };
  }

  /**
   * Recomputes these traces' figures, after their spans are stored, then empties every minute a
   * trace is still filed under other than its newest computation's (a minute it left when its start
   * moved, or the filing of a computation that another round's has since superseded): filedMinutesSql,
   * read after the refresh, so that of two rounds of one trace the later read sees both filings.
   * Returns the minutes (ms) whose daily costs and trace metrics change: the traces' start minutes,
   * and those emptied.
   *
   * `recheck` names traces whose upkeep may have run before and stopped part-way (their job is a
   * retry, or was taken over from a worker that died): every minute they are filed under is
   * recomputed too, an emptied minute whose costs the earlier run may never have got to.
   *
   * `look`: the round's look (TraceLook). When it found every one of these traces, the refresh is
   * bounded by its groups' times and stamped with its time; otherwise (a back-fill's own traces,
   * which the round did not look for) by what trace_index holds of them as it runs, stamped with
   * that time, all of them grouped by their time as trace_index holds it (one lookup more). Where
   * they are filed is read in the same groups.
   */
  async refreshTraceFigures(
    project: ProjectRef,
    traceIds: string[],
    recheck: string[] = [],
    look?: TraceLook,
  ): Promise<{ minutes: number[] }> {
    if (traceIds.length === 0) return { minutes: [] };
    const inLook = withinLook(look?.groups, traceIds);
    const boundedByLook = look !== undefined && inLook.unlooked.length === 0;
    // Traces the round did not look for (a back-fill's own) are grouped by their time as trace_index
    // holds it, all the traces with them: only a grouping, the statements read their bounds as they run.
    const grouped = !boundedByLook && inLook.all.length > 1 ? await this.groupedByTime(project, inLook.all) : inLook;
    await this.client.command(
      boundedByLook
        ? {
            query: withProjectFilters(refreshLookedTraceFiguresSql(inLook.looked.length), project),
            query_params: { ...project, lookedAt: look.at, ...lookedGroupParams(inLook.looked) },
            ...namedStatement('ingest.refresh_trace_figures'),
          }
        : {
            query: withProjectFilters(refreshStoredTraceFiguresSql(idGroups(grouped).length), project),
            query_params: { ...project, ...groupParams(grouped) },
            ...namedStatement('ingest.refresh_trace_figures'),
          },
    );
    const filed = await this.filedMinutes(project, grouped);
    // Where each trace's newest computation filed it: of the minutes that hold it, the newest stamp.
    // Stamps are fixed-width 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC): text order is time order.
    const newest = new Map<string, FiledMinute>();
    for (const f of filed) {
      const known = newest.get(f.traceId);
      // Equal stamps (two looks in one microsecond) go to the later minute, so that every reader keeps the same one.
      if (f.present && (!known || f.stamp > known.stamp || (f.stamp === known.stamp && f.minuteMs > known.minuteMs)))
        newest.set(f.traceId, f);
    }
    const vacated = filed.filter((f) => f.present && newest.get(f.traceId) !== f);
    if (vacated.length > 0)
      await this.client.command({
        query: withProjectFilters(VACATE_TRACE_MINUTES_SQL, project),
        query_params: {
          ...project,
          vacatedTraces: vacated.map((f) => f.traceId),
          vacatedMinutes: vacated.map((f) => f.minuteMs),
          vacatedStamps: vacated.map((f) => newest.get(f.traceId)!.stamp),
        },
        ...namedStatement('ingest.vacate_trace_minutes'),
      });
    const rechecked = new Set(recheck);
    const minutes = [...newest.values(), ...vacated, ...filed.filter((f) => rechecked.has(f.traceId))].map((f) => f.minuteMs);
    return { minutes: [...new Set(minutes)] };
  }

  /**
   * Some traces in groups of like time (lookGroups) by the time trace_index holds of them: one
   * lookup, for a round refreshing traces it did not look for. Those it has no row of are one group
   * more.
   */
  private async groupedByTime(project: ProjectRef, traceIds: string[]): Promise<InGroups> {
    const result = await this.client.query({
      query: withProjectFilters(TRACE_TIMES_SQL, project),
      query_params: { ...project, traceIds },
      format: 'JSONEachRow',
      ...namedStatement('ingest.trace_times'),
    });
    // In the given order within each group, as withinLook keeps them.
    return withinLook(groupsOfTimes(await result.json<{ trace_id: string; first_start: string; last_end: string }>()), traceIds);
  }

  /**
   * Every minute these traces (in groups of like time) are filed under in trace_minutes: whether its
   * newest row still holds the trace, and that row's stamp.
   */
  private async filedMinutes(project: ProjectRef, grouped: InGroups): Promise<FiledMinute[]> {
    const result = await this.client.query({
      query: withProjectFilters(filedMinutesSql(idGroups(grouped).length), project),
      query_params: { ...project, ...groupParams(grouped) },
      format: 'JSONEachRow',
      ...namedStatement('ingest.filed_minutes'),
    });
    return (await result.json<{ trace_id: string; minute_ms: string | number; present: number; stamp: string }>()).map((r) => ({
      traceId: r.trace_id,
      minuteMs: Number(r.minute_ms),
      present: Number(r.present) === 1,
      stamp: r.stamp,
    }));
  }

  /**
   * Recomputes the session_figures rows of these sessions (after their traces' own figures): a
   * round's sessions (SpanWriter's sessionsToRefresh).
   */
  async refreshSessionFigures(project: ProjectRef, sessionIds: string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.client.command({
      query: withProjectFilters(REFRESH_SESSIONS_FIGURES_SQL, project),
      query_params: { ...project, sessions: sessionIds },
      ...namedStatement('ingest.refresh_session_figures'),
    });
  }

  /**
   * Recomputes the costs of these minutes (ms, UTC; cost_minute) and then the daily cost rows of
   * their days. Like every rollup refresh of the upkeep, it leaves out erased traces (their
   * tombstones) as the API's reads do: between an erasure's answer and its job deleting their rows,
   * a round touching the same minute must not count them again.
   */
  async refreshDailyCosts(project: ProjectRef, minutes: number[]): Promise<void> {
    if (minutes.length === 0) return;
    await this.unerasedCommand(project, 'ingest.refresh_cost_minute', REFRESH_COST_MINUTE_SQL, { minutes });
    await this.unerasedCommand(project, 'ingest.refresh_cost_daily', REFRESH_COST_DAILY_SQL, { days: daysOf(minutes) });
  }

  /** Recomputes the trace metrics of these minutes (ms, UTC) and then of their hours, erased traces left out (as refreshDailyCosts). */
  async refreshTraceMetrics(project: ProjectRef, minutes: number[]): Promise<void> {
    if (minutes.length === 0) return;
    await this.unerasedCommand(project, 'ingest.refresh_trace_metrics_minute', REFRESH_TRACE_METRICS_MINUTE_SQL, { minutes });
    await this.unerasedCommand(project, 'ingest.refresh_trace_metrics_hour', REFRESH_TRACE_METRICS_HOUR_SQL, { hours: hoursOf(minutes) });
  }

  /** One statement of the project's, reading no row of an erased trace. */
  private async unerasedCommand(project: ProjectRef, name: string, sql: string, params: Record<string, unknown>): Promise<void> {
    await this.client.command({
      query: withProjectFilters(sql, project, { erasures: true }),
      query_params: { ...project, ...params },
      ...namedStatement(name),
    });
  }

  /**
   * The stored spans of these traces that the upkeep writes again, as JSONEachRow lines with a new
   * `ingested_at` (the newer copy replaces the old one): each span stored without a session, given
   * its trace's, and the root of a GenAI trace stored with a type that becomes RUN, typed RUN.
   *
   * Inserted again, the copy replaces the old row (ReplacingMergeTree) and the rollups pick it up;
   * the idempotent ones are unchanged. Only a read: the lines ride along with the next insert.
   *
   * Both changes are worked out from the spans as this statement reads them, whichever of the two
   * the caller's look found, so a copy holds everything stored before it was read. Two workers'
   * rounds can read the same root (one for its session, one for RUN) and write their copies in
   * either order; the copy read last is the newest, and it holds both. Were each copy to carry
   * only the change its round looked for, the newest could undo the other's, and no round would
   * look again (docs/architecture.md, upkeep loop, "One copy carries both").
   *
   * The spans are read in the time trace_index holds of the traces as the statement runs, in the
   * groups of the round's `look`.
   */
  async rewrittenSpanLines(project: ProjectRef, traceIds: string[], look?: TraceLook): Promise<{ text: string; rows: number }> {
    if (traceIds.length === 0) return { text: '', rows: 0 };
    const grouped = withinLook(look?.groups, traceIds);
    const result = await this.client.query({
      // The filter sits in a subquery: in the outer SELECT the REPLACE aliases would shadow the columns.
      // Each span's newest copy by LIMIT 1 BY, not FINAL, so that the traces' time skips the parts of older spans (SPAN_COPY_KEY).
      query: withProjectFilters(
        `${STORED_TIMES_WITH_SQL}SELECT * EXCEPT (trace_session, gen_ai_trace) REPLACE (
                if(session_id = '', trace_session, session_id) AS session_id,
                if(${ROOT_TO_RUN}, 'RUN', toString(span_type)) AS span_type,
                now64(3) AS ingested_at)
              FROM (
                SELECT * FROM (
                  SELECT *, max(session_id) OVER trace AS trace_session,
                    max(has({genAiTypes:Array(String)}, toString(span_type))) OVER trace AS gen_ai_trace
                  FROM (
                    SELECT * FROM spans
                    WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                      AND ${storedTracesTimeSql(idGroups(grouped).length)}
                    ORDER BY ingested_at DESC LIMIT 1 BY ${SPAN_COPY_KEY})
                  WINDOW trace AS (PARTITION BY trace_id))
                WHERE (session_id = '' AND trace_session != '') OR (${ROOT_TO_RUN}))`,
        project,
      ),
      query_params: { ...project, ...groupParams(grouped), genAiTypes: GEN_AI_TRACE_TYPES, upgradable: ROOT_UPGRADABLE_TYPES },
      format: 'JSONEachRow',
      ...namedStatement('ingest.rewritten_spans'),
    });
    const text = await result.text();
    let rows = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows++;
    return { text, rows };
  }
}
