import type { Pool } from 'pg';
import {
  REFRESH_COST_DAILY_SQL,
  REFRESH_COST_MINUTE_SQL,
  REFRESH_SESSIONS_FIGURES_SQL,
  REFRESH_TRACE_METRICS_HOUR_SQL,
  REFRESH_TRACE_METRICS_MINUTE_SQL,
  awaitDeletes,
  deleteInPartitions,
  namedStatement,
  rewriteWithoutDeleted,
  withProjectFilters,
  type ClickHouseClient,
  type DeletedPartitions,
} from '@spanforge/clickhouse';
import { badInput } from '@spanforge/errors';
import { DeadLetterRepository } from './dead-letter.repository';
import { daysOf, hoursOf, type ProjectRef } from './span.repository';

export type ErasureStatus = 'PENDING' | 'RUNNING' | 'COMPLETED';

/** What an erasure names: a user's traces, a session's, and/or traces by id. */
export interface ErasureRequest {
  userId?: string | null;
  sessionId?: string | null;
  traceIds?: readonly string[] | null;
}

/** One erasure as PostgreSQL records it (erasure_jobs): who asked for what, when, and how far it is. */
export interface ErasureJob {
  id: string;
  tenantId: string;
  projectId: string;
  requestedBy: string;
  userId: string | null;
  sessionId: string | null;
  traceIds: string[];
  traceCount: number;
  status: ErasureStatus;
  requestedAt: Date;
  /**
   * When a worker (or the request) last took it: its claim while RUNNING, and kept when its run
   * ends waiting again (a failure, a rerun), so the claim knows when its project was last served.
   */
  startedAt: Date | null;
  completedAt: Date | null;
  lastError: string | null;
}

/**
 * An erasure request that failed after its job was recorded: the job (`jobId`) is with the workers,
 * who finish it (whatever the request hid stays hidden, and is removed); `cause` is why it failed.
 * `releaseFailure`: why the job could not be given back at once either (then it is claimed again
 * as abandoned, ERASURE_RECLAIM_AFTER_MS after the request).
 */
export class ErasureInterruptedError extends Error {
  constructor(
    readonly jobId: string,
    cause: unknown,
    readonly releaseFailure?: unknown,
  ) {
    super(`erasure ${jobId} was recorded but its request failed before handing it to the workers`, { cause });
    this.name = 'ErasureInterruptedError';
  }
}

/** Trace ids one request may name; a user's or session's traces are found by the service, without limit. */
export const MAX_ERASED_TRACE_IDS = 10_000;
const MAX_ID_LENGTH = 256;
/** The condition that confines a statement of the erasure to its project (bound parameters). */
const SCOPE = 'tenant_id = {tenantId:String} AND project_id = {projectId:String}';
/** The trace id of a session's own tombstone: OTLP trace ids are hex, so no span has it. */
const SESSION_TOMBSTONE = 'session:';
/** A job claimed this long ago and not completed is taken to be abandoned (its worker died) and claimed again. */
export const ERASURE_RECLAIM_AFTER_MS = 10 * 60_000;
/** A failed attempt's job waits this long before it is claimed again, doubling with each failure in a row… */
export const ERASURE_RETRY_AFTER_MS = 2_000;
/** …up to this. */
export const ERASURE_RETRY_AFTER_MAX_MS = 10 * 60_000;

/**
 * The tables whose rows name their trace: the erasure job deletes an erased trace's rows from each.
 * (The session and run rollups are rebuilt, and the day, hour and minute rollups recomputed, from what is left.)
 * trace_index first: a span stored during the job then either goes with the deletes after it, or
 * leaves a trace_index row in which the worker's round finds the trace and has the job run again.
 */
export const ERASED_TRACE_TABLES = [
  'trace_index',
  'spans',
  'span_log_events',
  'span_facts',
  'traces',
  'trace_figures',
  'trace_minutes',
  'feedback',
] as const;

/**
 * What an erasure's traces were summed into: span-metrics minutes (ms), and the minutes (ms) of
 * costs and trace metrics, each trace's start minute and those it left (the cost days and the
 * trace-metrics hours are computed from these minutes, so they are the days and hours of them).
 */
interface TouchedAggregates {
  minutes: number[];
  traceMinutes: number[];
}

interface JobRow {
  id: string;
  tenant_id: string;
  project_id: string;
  requested_by: string;
  user_id: string | null;
  session_id: string | null;
  trace_ids: string[];
  trace_count: number;
  status: ErasureStatus;
  requested_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  last_error: string | null;
}

const JOB_COLUMNS =
  'id, tenant_id, project_id, requested_by, user_id, session_id, trace_ids, trace_count, status, requested_at, started_at, completed_at, last_error';

function toJob(row: JobRow): ErasureJob {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    requestedBy: row.requested_by,
    userId: row.user_id,
    sessionId: row.session_id,
    traceIds: row.trace_ids,
    traceCount: Number(row.trace_count),
    status: row.status,
    requestedAt: row.requested_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    lastError: row.last_error,
  };
}

/** A job's id (a UUID); anything else names no job. */
const JOB_ID = /^[0-9a-f-]{36}$/i;

/** The bound parameters of a job's statements; `{jobId}` picks its tombstones. */
function jobParams(job: ErasureJob): Record<string, unknown> {
  return { tenantId: job.tenantId, projectId: job.projectId, jobId: job.id };
}

const JOB_TRACES = `(SELECT trace_id FROM erased_traces
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND job_id = {jobId:String})`;

/**
 * Erasure (docs/data-policy.md, "Erasure"): a request writes its traces' tombstones to ClickHouse
 * (from then on no API read returns them) and its record to PostgreSQL; a worker's job then
 * deletes the traces' rows from every table and recomputes what was summed from them.
 */
export class ErasureRepository {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly pool: Pool,
  ) {}

  /**
   * Finds the traces a request names (a user's or session's as the project's trace index knows
   * them; trace ids as given, stored yet or not), records the job, writes their tombstones,
   * recomputes what sums them (cost days, span minutes, and the sessions that keep other traces),
   * then hands the job to the workers. The tombstones come before the answer: once this answers,
   * no read returns the traces and no aggregate counts them.
   *
   * The job is recorded first, held by the request (`RUNNING`), so that hidden data is never left
   * without a job to remove it: a request that fails after recording it gives it to the workers
   * with the reason and answers ErasureInterruptedError; one whose process dies leaves it to be
   * claimed again as abandoned. The job writes the tombstones itself if they never landed.
   */
  async request(project: ProjectRef, request: ErasureRequest, requestedBy: string): Promise<ErasureJob> {
    const userId = request.userId ?? '';
    const sessionId = request.sessionId ?? '';
    const traceIds = [...new Set(request.traceIds ?? [])];
    if (!userId && !sessionId && traceIds.length === 0) throw badInput('eraseData needs a userId, a sessionId or traceIds');
    if (traceIds.length > MAX_ERASED_TRACE_IDS) throw badInput(`eraseData takes at most ${MAX_ERASED_TRACE_IDS} traceIds a request`);
    for (const id of [userId, sessionId, ...traceIds])
      if (id.length > MAX_ID_LENGTH) throw badInput(`ids are at most ${MAX_ID_LENGTH} characters`);
    if (traceIds.some((id) => id === '')) throw badInput('traceIds must not be empty strings');
    const terms = { userId, sessionId, traceIds };
    const traces = await this.tracesNamed(project, terms);
    const { rows } = await this.pool.query<JobRow>(
      `INSERT INTO erasure_jobs (tenant_id, project_id, requested_by, user_id, session_id, trace_ids, trace_count, status, started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'RUNNING', date_trunc('milliseconds', now())) RETURNING ${JOB_COLUMNS}`,
      [
        project.tenantId,
        project.projectId,
        requestedBy,
        userId || null,
        sessionId || null,
        traceIds,
        [...traces.keys()].filter((traceId) => !traceId.startsWith(SESSION_TOMBSTONE)).length,
      ],
    );
    const job = toJob(rows[0]!);
    try {
      await this.insertTombstones(project, job.id, traces);
      await this.recomputeAggregates(project, job.id, { onlyUnerased: true });
      // Sessions that keep other traces: their rollup and figures without the erased ones, now (a
      // session erased whole is left out by the reads' filters already).
      const partial = [
        ...new Set([...traces.values()].filter((t) => t.whole_session === 0 && t.session_id !== '').map((t) => t.session_id)),
      ];
      if (partial.length > 0) {
        const rebuilt = await this.rebuildSessionsWithoutErased(project, partial);
        await rewriteWithoutDeleted(this.clickhouse, rebuilt, 'erasure.rewrite');
      }
      return await this.handOver(job, null);
    } catch (error) {
      const reason = `the request stopped before its job was handed to the workers: ${error instanceof Error ? error.message : String(error)}`;
      // If this fails too, the job stays RUNNING and is claimed again as abandoned: said in the error.
      const released = await this.handOver(job, reason).then(
        () => undefined,
        (releaseError: unknown) => releaseError,
      );
      throw new ErasureInterruptedError(job.id, error, released);
    }
  }

  /**
   * Gives a job the request held to the workers (PENDING), with why when the request failed. Only
   * while the request still holds it: a request slower than ERASURE_RECLAIM_AFTER_MS has had its
   * job claimed by a worker as abandoned, and must not hand a running or finished job out again.
   * Answers the job as it now is. (The request's `started_at` is in whole milliseconds, so the
   * JavaScript Date it was read back as names it exactly.)
   */
  private async handOver(job: ErasureJob, error: string | null): Promise<ErasureJob> {
    const { rows } = await this.pool.query<JobRow>(
      `UPDATE erasure_jobs SET status = 'PENDING', started_at = NULL, last_error = $3, rerun = false, due_at = now()
       WHERE id = $1 AND status = 'RUNNING' AND started_at = $2 RETURNING ${JOB_COLUMNS}`,
      [job.id, job.startedAt, error?.slice(0, 4_000) ?? null],
    );
    return rows[0] ? toJob(rows[0]) : ((await this.job(job.id)) ?? job);
  }

  /**
   * The traces a request names, each with its session and whether its whole session goes: a
   * trace of the user or session takes its whole session with it, one named by id only itself.
   * Ids not stored (yet) are named all the same, and a session not stored gets a tombstone of its
   * own (under no trace id a span can have), so whatever of them arrives later is left out.
   */
  private async tracesNamed(
    project: ProjectRef,
    terms: { userId: string; sessionId: string; traceIds: string[] },
  ): Promise<Map<string, { session_id: string; whole_session: number }>> {
    const { userId, sessionId, traceIds } = terms;
    const found = await this.clickhouse.query({
      query: withProjectFilters(
        `SELECT trace_id, max(session_id) AS session_id, max(user_id) AS user_id FROM trace_index
         WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
         GROUP BY trace_id
         HAVING ({userId:String} != '' AND user_id = {userId:String}) OR ({sessionId:String} != '' AND session_id = {sessionId:String})
           OR trace_id IN {traceIds:Array(String)}`,
        project,
      ),
      query_params: { ...project, userId, sessionId, traceIds },
      format: 'JSONEachRow',
      ...namedStatement('erasure.find_traces'),
    });
    const traces = new Map<string, { session_id: string; whole_session: number }>();
    for (const row of await found.json<{ trace_id: string; session_id: string; user_id: string }>()) {
      const whole = (userId !== '' && row.user_id === userId) || (sessionId !== '' && row.session_id === sessionId);
      traces.set(row.trace_id, { session_id: row.session_id, whole_session: whole && row.session_id !== '' ? 1 : 0 });
    }
    for (const traceId of traceIds) if (!traces.has(traceId)) traces.set(traceId, { session_id: '', whole_session: 0 });
    if (sessionId && ![...traces.values()].some((t) => t.session_id === sessionId))
      traces.set(`${SESSION_TOMBSTONE}${sessionId}`, { session_id: sessionId, whole_session: 1 });
    return traces;
  }

  private async insertTombstones(
    project: ProjectRef,
    jobId: string,
    traces: Map<string, { session_id: string; whole_session: number }>,
  ): Promise<void> {
    if (traces.size === 0) return;
    await this.clickhouse.insert({
      table: 'erased_traces',
      values: [...traces].map(([traceId, t]) => ({
        tenant_id: project.tenantId,
        project_id: project.projectId,
        trace_id: traceId,
        session_id: t.session_id,
        whole_session: t.whole_session,
        job_id: jobId,
      })),
      format: 'JSONEachRow',
      ...namedStatement('erasure.insert_tombstones'),
    });
  }

  /**
   * The job's tombstones written again, from what its request named as the trace index knows it
   * now: a request stopped before or during its insert (a large one is committed block by block)
   * may have left none or some. Rows already there are written the same again, which changes
   * nothing (erased_traces keeps one row a trace); traces whose rows an earlier attempt of the job
   * deleted are no longer found, and keep the tombstones they have.
   */
  private async rewriteTombstones(project: ProjectRef, job: ErasureJob): Promise<void> {
    const terms = { userId: job.userId ?? '', sessionId: job.sessionId ?? '', traceIds: job.traceIds };
    await this.insertTombstones(project, job.id, await this.tracesNamed(project, terms));
  }

  /** A job by id, within a project (a key's), or any project's (the admin). */
  async job(id: string, projectId?: string): Promise<ErasureJob | undefined> {
    if (!JOB_ID.test(id)) return undefined;
    const { rows } = await this.pool.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM erasure_jobs WHERE id = $1 AND ($2::uuid IS NULL OR project_id = $2)`,
      [id, projectId ?? null],
    );
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /**
   * Runs these jobs of a project again (the upkeep found spans of their traces stored after them):
   * a COMPLETED one goes back to PENDING, one RUNNING is marked to do so when its run ends (that
   * run may have deleted before the spans were stored), one PENDING runs anyway. `reason` is
   * recorded as its last error until it completes.
   */
  async runAgain(project: ProjectRef, jobIds: string[], reason: string): Promise<void> {
    await this.pool.query(
      `UPDATE erasure_jobs SET status = CASE WHEN status = 'COMPLETED' THEN 'PENDING' ELSE status END,
         rerun = status = 'RUNNING', last_error = $3, due_at = now()
       WHERE project_id = $1 AND id = ANY ($2::uuid[]) AND status IN ('COMPLETED', 'RUNNING')`,
      [project.projectId, jobIds.filter((id) => JOB_ID.test(id)), reason.slice(0, 4_000)],
    );
  }

  /**
   * Takes a job no worker is running (or one whose worker has not finished it within
   * ERASURE_RECLAIM_AFTER_MS): several workers never take the same job at once. Projects take
   * turns: each project's open jobs are ranked, those running first and then by when they are due,
   * and the claim takes the best-ranked due job of all; among equals, the project served least
   * recently (the latest start of any of its jobs), then the earliest due. So a project's second
   * job waits until every project's first has been taken, also once its first has completed (its
   * next is then its first, but its project was just served), and a job that keeps
   * failing (it is due again only after its back-off) or runs again and again for late spans (due
   * from then) holds up no other project's. The claim is named by its `started_at` (whole
   * milliseconds, so the Date read back names it exactly): `complete` and `release` apply only
   * while it holds.
   */
  async claim(): Promise<ErasureJob | undefined> {
    const { rows } = await this.pool.query<JobRow>(
      `WITH turns AS (
         SELECT id, due_at, row_number() OVER (PARTITION BY project_id ORDER BY status = 'RUNNING' DESC, due_at, requested_at) AS turn,
           (SELECT max(started_at) FROM erasure_jobs s WHERE s.project_id = o.project_id) AS served
         FROM erasure_jobs o WHERE status <> 'COMPLETED')
       UPDATE erasure_jobs SET status = 'RUNNING', started_at = date_trunc('milliseconds', now())
       WHERE id = (SELECT e.id FROM erasure_jobs e JOIN turns t ON t.id = e.id
                   WHERE (e.status = 'PENDING' AND e.due_at <= now())
                      OR (e.status = 'RUNNING' AND e.started_at < now() - make_interval(secs => $1))
                   ORDER BY t.turn, t.served NULLS FIRST, t.due_at LIMIT 1 FOR UPDATE OF e SKIP LOCKED)
       RETURNING ${JOB_COLUMNS}`,
      [ERASURE_RECLAIM_AFTER_MS / 1000],
    );
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /**
   * Records a claimed job COMPLETED, or PENDING when it was asked to run again during this run
   * (runAgain), keeping its `started_at`: answers the status it left the job in. Answers undefined, changing nothing, when the
   * claim no longer holds: a run slower than ERASURE_RECLAIM_AFTER_MS has had its job claimed
   * again by another worker, which runs it whole and completes it itself.
   */
  async complete(job: ErasureJob): Promise<'COMPLETED' | 'PENDING' | undefined> {
    const { rows } = await this.pool.query<{ status: 'COMPLETED' | 'PENDING' }>(
      `UPDATE erasure_jobs SET status = CASE WHEN rerun THEN 'PENDING' ELSE 'COMPLETED' END,
         completed_at = CASE WHEN rerun THEN completed_at ELSE now() END,
         last_error = CASE WHEN rerun THEN last_error ELSE NULL END, rerun = false, failures = 0, due_at = now()
       WHERE id = $1 AND status = 'RUNNING' AND started_at = $2 RETURNING status`,
      [job.id, job.startedAt],
    );
    return rows[0]?.status;
  }

  /**
   * Gives a failed attempt back, with why (keeping its `started_at`, when its project was served):
   * it is tried again (every step is idempotent) once due,
   * after ERASURE_RETRY_AFTER_MS doubled for each failure in a row (at most ERASURE_RETRY_AFTER_MAX_MS).
   * Answers false, changing nothing, when the claim no longer holds (see `complete`): giving the
   * job back then would let a third worker run it beside the one that holds it, or run a
   * completed job again.
   */
  async release(job: ErasureJob, error: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE erasure_jobs SET status = 'PENDING', last_error = $3, rerun = false, failures = failures + 1,
         due_at = now() + make_interval(secs => least($4 * power(2, least(failures, 20)), $5))
       WHERE id = $1 AND status = 'RUNNING' AND started_at = $2`,
      [job.id, job.startedAt, error.slice(0, 4_000), ERASURE_RETRY_AFTER_MS / 1000, ERASURE_RETRY_AFTER_MAX_MS / 1000],
    );
    return rowCount === 1;
  }

  /**
   * These sessions' rollup and figures again from their spans, erased traces left out: their
   * rollup rows are deleted and rebuilt (rebuildSessions). For the sessions that keep other traces
   * when some are erased, and for those a span of an erased trace reached after its erasure (the
   * worker's round). Answers the partitions deleted from; the rows are masked at once, and a
   * caller that must have them gone from the parts rewrites those (rewriteWithoutDeleted).
   */
  async rebuildSessionsWithoutErased(project: ProjectRef, sessions: string[]): Promise<DeletedPartitions[]> {
    if (sessions.length === 0) return [];
    const where = 'tenant_id = {tenantId:String} AND project_id = {projectId:String} AND session_id IN {sessions:Array(String)}';
    const deleted = await deleteInPartitions(this.clickhouse, 'sessions', where, { ...project, sessions }, 'erasure.delete_sessions');
    await awaitDeletes(this.clickhouse, ['sessions'], project);
    const older = await this.rebuildSessions(project, sessions, { erasures: true });
    return [deleted, older];
  }

  /**
   * The sessions' rollup (whose rows the caller deleted) again from their spans, as sessions_mv
   * writes it, then their figures. With `erasures`, the spans of erased traces are left out
   * (the request does this for sessions that keep other traces, before the job deletes them).
   *
   * Then the sessions' computations from before the rebuild leave session_minutes, the filing by
   * last activity: without the erased traces a session can end earlier, and an older computation
   * filed under a later minute would list it there (a ranged page keeps the newest row among the
   * minutes it reads). Deleted after the rebuild, not before, so that a computation another
   * process had under way when the rollup was deleted, and writes later, goes as well. Returns
   * the partitions deleted from, for rewriteWithoutDeleted.
   */
  private async rebuildSessions(project: ProjectRef, sessions: string[], options: { erasures?: boolean } = {}): Promise<DeletedPartitions> {
    const [{ now }] = await (
      await this.clickhouse.query({
        query: "SELECT toString(now64(6, 'UTC')) AS now",
        format: 'JSONEachRow',
        ...namedStatement('erasure.now'),
      })
    ).json<{ now: string }>();
    const statements: Array<[string, string]> = [
      [
        'erasure.rebuild_sessions',
        `INSERT INTO sessions (tenant_id, project_id, session_id, retention_days, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage)
         SELECT tenant_id, project_id, session_id, retention_days, min(start_time), max(end_time), max(user_id), groupUniqArray(trace_id),
           groupUniqArrayIf(span_id, status_code = 'ERROR'),
           maxMapIf(([span_id], [cost_usd], [tokens_input_uncached], [tokens_cache_read], [tokens_cache_write], [tokens_output], [tokens_reasoning]),
             usage_is_aggregate = 0 AND (cost_usd > 0 OR tokens_input_uncached + tokens_cache_read + tokens_cache_write + tokens_output + tokens_reasoning > 0))
         FROM spans FINAL WHERE ${SCOPE} AND session_id IN {sessions:Array(String)}
         GROUP BY tenant_id, project_id, session_id, retention_days`,
      ],
      ['erasure.refresh_session_figures', REFRESH_SESSIONS_FIGURES_SQL],
    ];
    for (const [name, sql] of statements)
      await this.clickhouse.command({
        query: withProjectFilters(sql, project, options),
        query_params: { ...project, sessions },
        ...namedStatement(name),
      });
    const older = await deleteInPartitions(
      this.clickhouse,
      'session_minutes',
      `${SCOPE} AND session_id IN {sessions:Array(String)} AND computed_at < {rebuiltFrom:DateTime64(6, 'UTC')}`,
      { ...project, sessions, rebuiltFrom: now },
      'erasure.delete_older_session_minutes',
    );
    await awaitDeletes(this.clickhouse, ['session_minutes'], project);
    return older;
  }

  /** The span minutes and trace minutes of a job's traces (found before their rows are deleted). */
  private async touchedAggregates(project: ProjectRef, jobId: string): Promise<TouchedAggregates> {
    const params = { tenantId: project.tenantId, projectId: project.projectId, jobId };
    const read = async <T>(name: string, sql: string): Promise<T[]> =>
      (
        await this.clickhouse.query({
          query: withProjectFilters(sql, project),
          query_params: params,
          format: 'JSONEachRow',
          ...namedStatement(name),
        })
      ).json<T>();
    const minutes = await read<{ minute: number }>(
      'erasure.touched_minutes',
      `SELECT DISTINCT toUnixTimestamp64Milli(minute) AS minute FROM span_facts WHERE ${SCOPE} AND trace_id IN ${JOB_TRACES}`,
    );
    const traceMinutes = await read<{ minute: number }>(
      'erasure.touched_trace_minutes',
      `SELECT DISTINCT toUnixTimestamp64Milli(minute) AS minute FROM trace_minutes WHERE ${SCOPE} AND trace_id IN ${JOB_TRACES}`,
    );
    return {
      minutes: minutes.map((row) => Number(row.minute)),
      traceMinutes: traceMinutes.map((row) => Number(row.minute)),
    };
  }

  /**
   * The day, hour and minute rollups the job's traces were summed into, without them: each cost day
   * computed again from the traces' cost rows that are not erased (`onlyUnerased`: before their
   * rows are deleted, the reads leave them out as the API's do), each trace-metrics hour from the
   * traces left in it, and each minute marked written
   * now, so readers take it from span_facts (which leaves them out) until the sealer computes it
   * again. Done before eraseData answers, so from then on no aggregate counts the traces.
   */
  private async recomputeAggregates(
    project: ProjectRef,
    jobId: string,
    options: { onlyUnerased?: boolean; touched?: TouchedAggregates },
  ): Promise<void> {
    const { minutes, traceMinutes } = options.touched ?? (await this.touchedAggregates(project, jobId));
    const run = async (name: string, sql: string, extra: Record<string, unknown>) => {
      await this.clickhouse.command({
        query: withProjectFilters(sql, project, { erasures: options.onlyUnerased }),
        query_params: { tenantId: project.tenantId, projectId: project.projectId, ...extra },
        ...namedStatement(name),
      });
    };
    // Days and hours from their minutes: the minutes first.
    if (traceMinutes.length > 0) {
      await run('erasure.refresh_cost_minute', REFRESH_COST_MINUTE_SQL, { minutes: traceMinutes });
      await run('erasure.refresh_trace_metrics_minute', REFRESH_TRACE_METRICS_MINUTE_SQL, { minutes: traceMinutes });
    }
    const costDays = daysOf(traceMinutes);
    const metricHours = hoursOf(traceMinutes);
    if (costDays.length > 0) await run('erasure.refresh_cost_daily', REFRESH_COST_DAILY_SQL, { days: costDays });
    if (metricHours.length > 0) await run('erasure.refresh_trace_metrics_hour', REFRESH_TRACE_METRICS_HOUR_SQL, { hours: metricHours });
    if (minutes.length > 0) {
      await run(
        'erasure.mark_minutes',
        `INSERT INTO span_minute_marks (tenant_id, project_id, minute, dirty_at, retention_days)
         SELECT tenant_id, project_id, minute, now64(3), max(retention_days) FROM span_minute_marks
         WHERE ${SCOPE} AND toUnixTimestamp64Milli(minute) IN {minutes:Array(Int64)}
         GROUP BY tenant_id, project_id, minute`,
        { minutes },
      );
      await run(
        'erasure.dirty_minutes',
        `INSERT INTO span_minute_dirt (dirty_at, tenant_id, project_id, minute)
         SELECT now64(3), {tenantId:String}, {projectId:String}, fromUnixTimestamp64Milli(arrayJoin({minutes:Array(Int64)}), 'UTC')`,
        { minutes },
      );
    }
  }

  /**
   * The job's work in ClickHouse. What was summed from the traces is found first (their sessions,
   * runs, cost days and span minutes), then their rows are deleted from every table that names
   * them, the sessions and runs they were part of rebuilt from the spans left, the cost days
   * recomputed, the minute and hour metric rows of their minutes deleted and the minutes marked for
   * the metrics sealer (readers take a marked minute from
   * span_facts until it is sealed again, so the answers are exact at once). Idempotent.
   */
  async erase(job: ErasureJob): Promise<void> {
    const project = { tenantId: job.tenantId, projectId: job.projectId };
    const params = jobParams(job);
    // A job that completed before runs again for spans stored after it: its tombstones are all
    // written, and naming its user's or session's traces again would take in newer ones.
    if (job.completedAt === null) await this.rewriteTombstones(project, job);
    const read = async <T>(name: string, sql: string, extra: Record<string, unknown> = {}): Promise<T[]> =>
      (
        await this.clickhouse.query({
          query: withProjectFilters(sql, project),
          query_params: { ...params, ...extra },
          format: 'JSONEachRow',
          ...namedStatement(name),
        })
      ).json<T>();
    const run = async (name: string, sql: string, extra: Record<string, unknown> = {}): Promise<void> => {
      await this.clickhouse.command({
        query: withProjectFilters(sql, project),
        query_params: { ...params, ...extra },
        ...namedStatement(name),
      });
    };
    // The sessions from the tombstones (each names its trace's session), so a retry after the
    // trace index rows are gone still rebuilds them, and from the trace index (spans stored after
    // the erasure may name another); the runs from the trace index.
    const [touched] = await read<{ sessions: string[]; whole: string[]; runs: string[] }>(
      'erasure.touched',
      `SELECT arrayDistinct(arrayConcat(
                (SELECT groupUniqArrayIf(session_id, session_id != '') FROM erased_traces WHERE ${SCOPE} AND job_id = {jobId:String}),
                (SELECT groupUniqArrayIf(session_id, session_id != '') FROM trace_index WHERE ${SCOPE} AND trace_id IN ${JOB_TRACES}))) AS sessions,
              (SELECT groupUniqArrayIf(session_id, whole_session = 1 AND session_id != '') FROM erased_traces
               WHERE ${SCOPE} AND job_id = {jobId:String}) AS whole,
              (SELECT groupUniqArrayIf(run_id, run_id != '')
               FROM (SELECT trace_id, max(run_id) AS run_id FROM trace_index WHERE ${SCOPE} AND trace_id IN ${JOB_TRACES} GROUP BY trace_id)) AS runs`,
    );
    const touchedAggregates = await this.touchedAggregates(project, job.id);
    const sessions = touched?.sessions ?? [];
    const wholeSessions = touched?.whole ?? [];
    const runs = touched?.runs ?? [];

    // Every delete first (patch parts mask the rows at once; where the engine falls back to a
    // mutation, awaitDeletes waits for it): the rebuilds below read only the spans left.
    const deleted: DeletedPartitions[] = [];
    const remove = async (name: string, table: string, where: string, extra: Record<string, unknown> = {}): Promise<void> => {
      const partitions = await deleteInPartitions(this.clickhouse, table, where, { ...params, ...extra }, name);
      if (partitions.partitions.length > 0) deleted.push(partitions);
    };
    for (const table of ERASED_TRACE_TABLES) await remove('erasure.delete_traces', table, `${SCOPE} AND trace_id IN ${JOB_TRACES}`);
    // Spans of whole sessions under other trace ids (none when every trace of them was erased).
    // Not on a run after a completed one: traces of the session stored since are new data.
    if (wholeSessions.length > 0 && job.completedAt === null)
      await remove('erasure.delete_session_spans', 'spans', `${SCOPE} AND session_id IN {sessions:Array(String)}`, {
        sessions: wholeSessions,
      });
    // A delete leaves rows written after it alone: the rollups rebuilt below survive it.
    if (sessions.length > 0) {
      await remove('erasure.delete_sessions', 'sessions', `${SCOPE} AND session_id IN {sessions:Array(String)}`, { sessions });
      await remove('erasure.delete_session_figures', 'session_figures', `${SCOPE} AND session_id IN {sessions:Array(String)}`, {
        sessions,
      });
    }
    if (runs.length > 0) await remove('erasure.delete_runs', 'runs', `${SCOPE} AND run_id IN {runs:Array(String)}`, { runs });
    const minutes = touchedAggregates.minutes;
    if (minutes.length > 0) {
      // The minute and hour rollups computed with the traces in them go; the sealer computes the
      // minutes again from the span facts left (readers take them from span_facts meanwhile).
      const hours = hoursOf(minutes);
      await remove(
        'erasure.delete_minute_metrics',
        'span_metrics_minute',
        `${SCOPE} AND toUnixTimestamp64Milli(minute) IN {minutes:Array(Int64)}`,
        {
          minutes,
        },
      );
      for (const table of ['span_metrics_hour', 'span_metrics_hour_coarse'])
        await remove('erasure.delete_hour_metrics', table, `${SCOPE} AND toUnixTimestamp64Milli(hour) IN {hours:Array(Int64)}`, { hours });
    }
    await awaitDeletes(this.clickhouse, [...new Set(deleted.map((d) => d.table))], project);

    // Erased traces left out of the rebuild: a span of one stored during the job is not counted.
    if (sessions.length > 0) deleted.push(await this.rebuildSessions(project, sessions, { erasures: true }));
    if (runs.length > 0) {
      await run(
        'erasure.rebuild_runs',
        `INSERT INTO runs (tenant_id, project_id, run_id, retention_days, first_seen, last_seen, trace_ids)
         SELECT tenant_id, project_id, run_id, retention_days, min(start_time), max(end_time), groupUniqArray(trace_id)
         FROM spans FINAL WHERE ${SCOPE} AND run_id IN {runs:Array(String)}
         GROUP BY tenant_id, project_id, run_id, retention_days`,
        { runs },
      );
    }
    await this.recomputeAggregates(project, job.id, { touched: touchedAggregates });
    // The computations of those trace-metrics hours from before (they summed the erased traces):
    // each hour's older rows go, its newest computation, made just now from what is left, stays.
    const hours = hoursOf(touchedAggregates.traceMinutes);
    if (hours.length > 0) {
      const newest = await read<{ hour_ms: string; computed: string }>(
        'erasure.newest_trace_metrics',
        `SELECT toUnixTimestamp64Milli(hour) AS hour_ms, toUnixTimestamp64Micro(max(computed_at)) AS computed FROM trace_metrics_hour
         WHERE ${SCOPE} AND toUnixTimestamp64Milli(hour) IN {hours:Array(Int64)} GROUP BY hour`,
        { hours },
      );
      await remove(
        'erasure.delete_older_trace_metrics',
        'trace_metrics_hour',
        `${SCOPE} AND toUnixTimestamp64Milli(hour) IN {newestHours:Array(Int64)}
         AND toUnixTimestamp64Micro(computed_at) < arrayElement({newestMicros:Array(Int64)}, indexOf({newestHours:Array(Int64)}, toUnixTimestamp64Milli(hour)))`,
        { newestHours: newest.map((row) => Number(row.hour_ms)), newestMicros: newest.map((row) => Number(row.computed)) },
      );
      await awaitDeletes(this.clickhouse, ['trace_metrics_hour'], project);
    }
    // Stored cost reports name their most expensive traces and sessions: the erased ones leave the
    // lists (the totals are sums of the window, not anyone's data, and stay as reported).
    const erasedTraces = (
      await read<{ trace_id: string }>(
        'erasure.job_traces',
        `SELECT trace_id FROM erased_traces WHERE ${SCOPE} AND job_id = {jobId:String}`,
      )
    ).map((row) => row.trace_id);
    await this.pool.query(
      `UPDATE cost_reports SET report = jsonb_set(jsonb_set(report,
         '{topTraces}', COALESCE((SELECT jsonb_agg(t) FROM jsonb_array_elements(report -> 'topTraces') AS t WHERE NOT (t ->> 'traceId' = ANY ($2))), '[]'::jsonb)),
         '{topSessions}', COALESCE((SELECT jsonb_agg(s) FROM jsonb_array_elements(report -> 'topSessions') AS s WHERE NOT (s ->> 'sessionId' = ANY ($3))), '[]'::jsonb))
       WHERE project_id = $1 AND expired_at IS NULL AND report ? 'topTraces' AND report ? 'topSessions'`,
      [job.projectId, erasedTraces, wholeSessions],
    );
    // Dead letters (spans and exports the store refused, kept for replay) hold content too.
    await new DeadLetterRepository(this.clickhouse).eraseHolding(project, new Set(erasedTraces), new Set(wholeSessions));
    // Last, so that the partitions' rewrites do not compete with the job's own statements.
    await rewriteWithoutDeleted(this.clickhouse, deleted, 'erasure.rewrite');
  }
}
