import type { Registry } from 'prom-client';
import { Histogram } from 'prom-client';
import { BatchingQueue, type BatchingOptions } from './batching.queue';
import type { ProjectRef, SpanRepository } from './span.repository';
import type { SpanRow } from './span.row';

/** Transient ClickHouse failures are retried this often inside one flush before the jobs fail (and BullMQ retries them). */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];

/**
 * Batches span rows across jobs into one insert, and gives every span its trace's session id —
 * including spans that arrived before the span naming the session (CONTRACT section 4: the session
 * is a property of the whole trace).
 */
export class SpanWriter {
  private readonly queue: BatchingQueue<SpanRow>;
  private readonly batchRows: Histogram;
  private readonly insertSeconds: Histogram;

  constructor(
    private readonly repository: SpanRepository,
    options: BatchingOptions,
    registry?: Registry,
  ) {
    this.queue = new BatchingQueue((rows) => this.store(rows), options);
    this.batchRows = new Histogram({
      name: 'spanforge_worker_batch_rows',
      help: 'Span rows per ClickHouse insert',
      buckets: [1, 10, 100, 500, 1_000, 5_000, 10_000, 50_000],
      registers: registry ? [registry] : [],
    });
    this.insertSeconds = new Histogram({
      name: 'spanforge_worker_insert_seconds',
      help: 'Time to write one batch of spans (session attribution included)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: registry ? [registry] : [],
    });
  }

  /** Resolves once these rows are stored. */
  write(rows: SpanRow[]): Promise<void> {
    return this.queue.add(rows);
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async store(rows: SpanRow[]): Promise<void> {
    const stop = this.insertSeconds.startTimer();
    this.batchRows.observe(rows.length);
    await withRetries(async () => {
      const projects = groupByProject(rows);
      const unresolved = new Map<string, Set<string>>();
      for (const [key, group] of projects) unresolved.set(key, await this.fillSessions(group.ref, group.rows));
      await this.repository.insertSpans(rows);
      for (const [key, group] of projects) await this.backfill(group.ref, group.rows, unresolved.get(key)!);
    });
    stop();
  }

  /** Fills rows from sessions seen in this batch or stored earlier; returns the traces still without one. */
  private async fillSessions(ref: ProjectRef, rows: SpanRow[]): Promise<Set<string>> {
    const sessions = sessionsIn(rows);
    const missing = new Set<string>();
    for (const row of rows) if (!sessions.has(row.trace_id)) missing.add(row.trace_id);
    for (const [traceId, sessionId] of await this.repository.traceSessions(ref, [...missing])) {
      sessions.set(traceId, sessionId);
      missing.delete(traceId);
    }
    for (const row of rows) if (row.session_id === '') row.session_id = sessions.get(row.trace_id) ?? '';
    return missing;
  }

  /**
   * After the insert, both sides of a race look again: a batch that brought a session back-fills
   * the trace's earlier spans, and a batch still without one asks once more whether a concurrent
   * batch stored it meanwhile. Whichever lands second sees the other.
   */
  private async backfill(ref: ProjectRef, rows: SpanRow[], unresolved: Set<string>): Promise<void> {
    const sessions = sessionsIn(rows);
    for (const [traceId, sessionId] of await this.repository.traceSessions(ref, [...unresolved])) sessions.set(traceId, sessionId);
    if (sessions.size === 0) return;
    const days = rows.filter((r) => sessions.has(r.trace_id)).map((r) => r.start_time);
    await this.repository.backfillSessions(ref, sessions, dayOf(days, -1), dayOf(days, +1));
  }
}

function sessionsIn(rows: SpanRow[]): Map<string, string> {
  const sessions = new Map<string, string>();
  for (const row of rows) if (row.session_id !== '') sessions.set(row.trace_id, row.session_id);
  return sessions;
}

function groupByProject(rows: SpanRow[]): Map<string, { ref: ProjectRef; rows: SpanRow[] }> {
  const groups = new Map<string, { ref: ProjectRef; rows: SpanRow[] }>();
  for (const row of rows) {
    const key = `${row.tenant_id}|${row.project_id}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ref: { tenantId: row.tenant_id, projectId: row.project_id }, rows: [] }));
    group.rows.push(row);
  }
  return groups;
}

/**
 * The earliest (direction −1) or latest (+1) day of these `seconds.nanos` times, widened by a day:
 * a trace's spans rarely start more than a day apart, and the widening keeps the back-fill's scan
 * to a few days of one project.
 */
function dayOf(times: string[], direction: -1 | 1): string {
  let edge = direction < 0 ? Infinity : -Infinity;
  for (const time of times) {
    const seconds = Number(time.slice(0, time.indexOf('.')));
    edge = direction < 0 ? Math.min(edge, seconds) : Math.max(edge, seconds);
  }
  return new Date((edge + direction * 86_400) * 1000).toISOString().slice(0, 10);
}

async function withRetries(work: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
    }
  }
}
