import {
  REFRESH_COST_DAILY_SQL,
  REFRESH_COST_MINUTE_SQL,
  REFRESH_SESSIONS_FIGURES_SQL,
  REFRESH_TRACE_FIGURES_SQL,
  REFRESH_LOOKED_TRACE_FIGURES_SQL,
  REFRESH_TRACE_METRICS_HOUR_SQL,
  REFRESH_TRACE_METRICS_MINUTE_SQL,
  TRACES_TIME_SQL,
  SPAN_COPY_KEY,
  FILED_MINUTES_SQL,
  VACATE_TRACE_MINUTES_SQL,
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
 * A minute a trace is filed under in trace_minutes (FILED_MINUTES_SQL): the UTC minute (ms) of its
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
 * A round's look at trace_index (SpanRepository.storedTraces): the engine's clock when it read, and
 * the time the stored spans of every trace it found cover, from the first start to the last end
 * (DateTime64 text, as the engine writes it). The round's trace figures refresh takes its bounds from
 * it instead of reading trace_index again, and is stamped with its time (docs/architecture.md, "One
 * look a round").
 */
export interface TraceLook {
  at: string;
  from: string;
  to: string;
}

/** What a round's look found: the stored traces by id, and the look (undefined when it found none). */
export interface StoredTraces {
  traces: Map<string, StoredTrace>;
  look?: TraceLook;
}

/** The parameters of a statement bounded by a look (LOOKED_TIME_SQL). */
function lookParams(look: TraceLook): Record<string, string> {
  return { from: look.from, to: look.to, lookedAt: look.at };
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

/**
 * Which of some traces, whose spans all start between {from} and {to}, have a root stored with a
 * type that becomes RUN ({upgradable}, or any type for {plainRoots}) and GenAI spans.
 */
const ROOTS_TO_RUN_SQL = `SELECT trace_id
  FROM traces
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
    AND day BETWEEN toDate({from:DateTime64(9, 'UTC')}) AND toDate({to:DateTime64(9, 'UTC')})
    AND start_time BETWEEN {from:DateTime64(9, 'UTC')} AND {to:DateTime64(9, 'UTC')}
    AND trace_id IN {traceIds:Array(String)}
  GROUP BY trace_id
  HAVING max(root_span_id) != ''
    AND (has({upgradable:Array(String)}, max(root_type)) OR has({plainRoots:Array(String)}, trace_id))
    AND hasAny(groupUniqArrayArray(span_types), {genAiTypes:Array(String)})`;

/** In rewrittenSpanLines, over a span and its trace: the root of a GenAI trace, stored with a type that becomes RUN. */
const ROOT_TO_RUN = "parent_span_id = '' AND gen_ai_trace AND has({upgradable:Array(String)}, toString(span_type))";

/** All SQL of the ingest write path. Every statement is bound to one tenant and project. */
export class SpanRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /** Inserts rows already serialised as JSONEachRow lines (one string per export), as one insert. */
  async insertSpanLines(texts: string[]): Promise<void> {
    await insertLines(this.client, 'INSERT INTO spans FORMAT JSONEachRow', texts, 'ingest.insert_spans');
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
   * spans cover. The second reads the traces rollup within that time (its days and its minmax index
   * on the start skip older traces' granules): the rollup's root type is the greatest stored, and RUN
   * sorts after every upgradable type, so a root already written again as RUN is not picked again —
   * unless `plainRoots` says a copy typed otherwise was just written (a retried export): that copy is
   * now the stored one, and the rollup cannot tell. One statement with the time as subqueries read
   * trace_index three times; a lookup of a round's random ids there reads a granule per id, so in a
   * large project that was most of the statement's cost (docs/scaling.md). A span stored between the
   * two statements is its own round's to look at: every round looks after its insert. The look
   * (time and bounds) is answered too, for the round's trace figures refresh.
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
    // Fixed-width 'YYYY-MM-DD hh:mm:ss.nnnnnnnnn': text order is time order.
    const from = found.reduce((earliest, r) => (r.first_start < earliest ? r.first_start : earliest), found[0]!.first_start);
    const to = found.reduce((latest, r) => (r.last_end > latest ? r.last_end : latest), found[0]!.last_end);
    const roots = await this.client.query({
      query: withProjectFilters(ROOTS_TO_RUN_SQL, project),
      query_params: {
        ...project,
        traceIds: found.map((r) => r.trace_id),
        from,
        to,
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
    return { traces, look: { at: found[0]!.looked_at, from, to } };
  }

  /**
   * Recomputes these traces' figures, after their spans are stored, then empties every minute a
   * trace is still filed under other than its newest computation's (a minute it left when its start
   * moved, or the filing of a computation that another round's has since superseded): FILED_MINUTES_SQL,
   * read after the refresh, so that of two rounds of one trace the later read sees both filings.
   * Returns the minutes (ms) whose daily costs and trace metrics change: the traces' start minutes,
   * and those emptied.
   *
   * `recheck` names traces whose upkeep may have run before and stopped part-way (their job is a
   * retry, or was taken over from a worker that died): every minute they are filed under is
   * recomputed too, an emptied minute whose costs the earlier run may never have got to.
   *
   * `look`: the round's look, when these traces are all ones it looked for (TraceLook): the refresh
   * is bounded by it and stamped with its time; without one, by what trace_index holds of them as
   * it runs, stamped with that time.
   */
  async refreshTraceFigures(
    project: ProjectRef,
    traceIds: string[],
    recheck: string[] = [],
    look?: TraceLook,
  ): Promise<{ minutes: number[] }> {
    if (traceIds.length === 0) return { minutes: [] };
    await this.client.command({
      query: withProjectFilters(look ? REFRESH_LOOKED_TRACE_FIGURES_SQL : REFRESH_TRACE_FIGURES_SQL, project),
      query_params: { ...project, traceIds, ...(look && lookParams(look)) },
      ...namedStatement('ingest.refresh_trace_figures'),
    });
    const filed = await this.filedMinutes(project, traceIds);
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

  /** Every minute these traces are filed under in trace_minutes: whether its newest row still holds the trace, and that row's stamp. */
  private async filedMinutes(project: ProjectRef, traceIds: string[]): Promise<FiledMinute[]> {
    const result = await this.client.query({
      query: withProjectFilters(FILED_MINUTES_SQL, project),
      query_params: { ...project, traceIds },
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
   */
  async rewrittenSpanLines(project: ProjectRef, traceIds: string[]): Promise<{ text: string; rows: number }> {
    if (traceIds.length === 0) return { text: '', rows: 0 };
    const result = await this.client.query({
      // The filter sits in a subquery: in the outer SELECT the REPLACE aliases would shadow the columns.
      // Each span's newest copy by LIMIT 1 BY, not FINAL, so that the traces' time skips the parts of older spans (SPAN_COPY_KEY).
      query: withProjectFilters(
        `SELECT * EXCEPT (trace_session, gen_ai_trace) REPLACE (
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
                      AND start_time BETWEEN ${TRACES_TIME_SQL} AND trace_id IN {traceIds:Array(String)}
                    ORDER BY ingested_at DESC LIMIT 1 BY ${SPAN_COPY_KEY})
                  WINDOW trace AS (PARTITION BY trace_id))
                WHERE (session_id = '' AND trace_session != '') OR (${ROOT_TO_RUN}))`,
        project,
      ),
      query_params: { ...project, traceIds, genAiTypes: GEN_AI_TRACE_TYPES, upgradable: ROOT_UPGRADABLE_TYPES },
      format: 'JSONEachRow',
      ...namedStatement('ingest.rewritten_spans'),
    });
    const text = await result.text();
    let rows = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows++;
    return { text, rows };
  }
}
