import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import {
  REFRESH_COST_DAILY_SQL,
  REFRESH_SESSION_FIGURES_SQL,
  REFRESH_TRACE_FIGURES_SQL,
  TRACES_DAYS_SQL,
  TRACES_START_DAYS_SQL,
  VACATE_TRACE_COST_DAYS_SQL,
  type ClickHouseClient,
} from '@spanforge/clickhouse';

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

export interface StoredTrace {
  sessionId: string;
  hasSessionless: boolean;
}

export interface ProjectRef {
  tenantId: string;
  projectId: string;
}

/** Named queries show up in ClickHouse's query_log (log_comment) and in our metrics. */
function named(name: string) {
  return { query_id: `${name}:${randomUUID()}`, clickhouse_settings: { log_comment: name } };
}

/** All SQL of the ingest write path. Every statement is bound to one tenant and project. */
export class SpanRepository {
  constructor(private readonly client: ClickHouseClient) {}

  /** Inserts rows already serialised as JSONEachRow lines (one string per export), as one insert. */
  async insertSpanLines(texts: string[]): Promise<void> {
    const result = await this.client.exec({ query: 'INSERT INTO spans FORMAT JSONEachRow', values: Readable.from(texts), ...named('ingest.insert_spans') });
    result.stream.resume();
    await finished(result.stream).catch(() => undefined);
  }

  async insertAccounting(rows: AccountingRow[]): Promise<void> {
    await this.client.insert({ table: 'ingest_accounting', values: rows, format: 'JSONEachRow', ...named('ingest.insert_accounting') });
  }

  /** What is stored of these traces: their session ('' if none yet) and whether any span of them lacks one. */
  async storedTraces(project: ProjectRef, traceIds: string[]): Promise<Map<string, StoredTrace>> {
    if (traceIds.length === 0) return new Map();
    const result = await this.client.query({
      query: `SELECT trace_id, max(session_id) AS session_id, max(has_sessionless) AS has_sessionless
              FROM trace_index
              WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND trace_id IN {traceIds:Array(String)}
              GROUP BY trace_id`,
      query_params: { ...project, traceIds },
      format: 'JSONEachRow',
      ...named('ingest.stored_traces'),
    });
    const rows = await result.json<{ trace_id: string; session_id: string; has_sessionless: number }>();
    return new Map(rows.map((r) => [r.trace_id, { sessionId: r.session_id, hasSessionless: Number(r.has_sessionless) === 1 }]));
  }

  /**
   * Recomputes these traces' figures, after their spans are stored. A trace whose start moved to an
   * earlier day leaves the day it was filed under for costs. Returns the days whose daily costs
   * change: the traces' start days, and the days they left.
   */
  async refreshTraceFigures(project: ProjectRef, traceIds: string[]): Promise<string[]> {
    if (traceIds.length === 0) return [];
    const before = await this.startDays(project, traceIds);
    await this.client.command({ query: REFRESH_TRACE_FIGURES_SQL, query_params: { ...project, traceIds }, ...named('ingest.refresh_trace_figures') });
    const after = await this.startDays(project, traceIds);
    const vacated = [...before].filter(([traceId, day]) => after.has(traceId) && after.get(traceId) !== day);
    if (vacated.length > 0) {
      await this.client.command({
        query: VACATE_TRACE_COST_DAYS_SQL,
        query_params: { ...project, vacatedTraces: vacated.map(([traceId]) => traceId), vacatedDays: vacated.map(([, day]) => day) },
        ...named('ingest.vacate_trace_cost_days'),
      });
    }
    return [...new Set([...after.values(), ...vacated.map(([, day]) => day)])];
  }

  /** Recomputes the session_figures rows of these traces' sessions (after the traces' own figures). */
  async refreshSessionFigures(project: ProjectRef, traceIds: string[]): Promise<void> {
    if (traceIds.length === 0) return;
    await this.client.command({ query: REFRESH_SESSION_FIGURES_SQL, query_params: { ...project, traceIds }, ...named('ingest.refresh_session_figures') });
  }

  /** Recomputes the daily cost rows of these days (UTC). */
  async refreshCostDaily(project: ProjectRef, days: string[]): Promise<void> {
    if (days.length === 0) return;
    await this.client.command({ query: REFRESH_COST_DAILY_SQL, query_params: { ...project, days }, ...named('ingest.refresh_cost_daily') });
  }

  /** The day each of these traces is filed under for costs (its start day), by trace id. */
  private async startDays(project: ProjectRef, traceIds: string[]): Promise<Map<string, string>> {
    const result = await this.client.query({ query: TRACES_START_DAYS_SQL, query_params: { ...project, traceIds }, format: 'JSONEachRow', ...named('ingest.trace_start_days') });
    return new Map((await result.json<{ trace_id: string; day: string }>()).map((r) => [r.trace_id, r.day]));
  }

  /**
   * The stored, session-less spans of these traces as JSONEachRow lines, each given its trace's
   * session and a newer `ingested_at`: inserted again, the copy replaces the old row
   * (ReplacingMergeTree) and the session rollup picks it up; the idempotent rollups are unchanged.
   * Only a read: the lines ride along with the next batch's insert (an insert has a fixed cost).
   */
  async sessionlessSpanLines(project: ProjectRef, sessions: Map<string, string>): Promise<{ text: string; rows: number }> {
    if (sessions.size === 0) return { text: '', rows: 0 };
    const result = await this.client.query({
      // The filter sits in a subquery: in the outer SELECT the REPLACE alias would shadow session_id.
      query: `SELECT * REPLACE (transform(trace_id, {traceIds:Array(String)}, {sessionIds:Array(String)}, '') AS session_id, now64(3) AS ingested_at)
              FROM (
                SELECT * FROM spans FINAL
                WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}
                  AND toDate(start_time) BETWEEN ${TRACES_DAYS_SQL}
                  AND trace_id IN {traceIds:Array(String)} AND session_id = '')`,
      query_params: { ...project, traceIds: [...sessions.keys()], sessionIds: [...sessions.values()] },
      format: 'JSONEachRow',
      ...named('ingest.sessionless_spans'),
    });
    const text = await result.text();
    let rows = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows++;
    return { text, rows };
  }
}
