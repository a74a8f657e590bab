import type { Registry } from 'prom-client';
import { Histogram } from 'prom-client';
import { BatchingQueue, type BatchingOptions } from './batching.queue';
import type { ProjectRef, SpanRepository } from './span.repository';
import type { SpanRow } from './span.row';

/** Transient ClickHouse failures are retried this often inside one flush before the jobs fail (and BullMQ retries them). */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];

/**
 * Batches span rows across jobs into one insert, and gives every span its trace's session id —
 * including spans stored before the span naming the session arrived (CONTRACT section 4: the
 * session is a property of the whole trace).
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
      const groups = [...groupByProject(rows).values()];
      const plans = [];
      for (const group of groups) plans.push(await this.attribute(group.ref, group.rows));
      await this.repository.insertSpans(rows);
      for (let i = 0; i < groups.length; i++) await this.backfill(groups[i]!.ref, groups[i]!.rows, plans[i]!);
    });
    stop();
  }

  /**
   * Before the insert: fills each row's session from its batch or from what is stored, and notes
   * which traces need their stored session-less spans rewritten, and which must be looked at again
   * after the insert (another worker may be writing the same trace right now).
   */
  private async attribute(ref: ProjectRef, rows: SpanRow[]): Promise<AttributionPlan> {
    const sessions = sessionsIn(rows);
    const traceIds = [...new Set(rows.map((r) => r.trace_id))];
    const stored = await this.repository.storedTraces(ref, traceIds);
    const backfill = new Map<string, string>();
    const recheck = new Set<string>();
    for (const traceId of traceIds) {
      const known = stored.get(traceId);
      if (!sessions.has(traceId) && known?.sessionId) sessions.set(traceId, known.sessionId);
      const session = sessions.get(traceId);
      if (session && known?.hasSessionless) backfill.set(traceId, session);
      else recheck.add(traceId);
    }
    for (const row of rows) if (row.session_id === '') row.session_id = sessions.get(row.trace_id) ?? '';
    return { backfill, recheck };
  }

  /**
   * After the insert, both sides of a race look again: whichever of two concurrent batches lands
   * second sees the other's session, or its session-less spans, and back-fills.
   */
  private async backfill(ref: ProjectRef, rows: SpanRow[], plan: AttributionPlan): Promise<void> {
    const sessions = new Map(plan.backfill);
    for (const [traceId, stored] of await this.repository.storedTraces(ref, [...plan.recheck])) {
      if (stored.sessionId && stored.hasSessionless) sessions.set(traceId, stored.sessionId);
    }
    if (sessions.size === 0) return;
    const times = rows.filter((r) => sessions.has(r.trace_id)).map((r) => r.start_time);
    await this.repository.backfillSessions(ref, sessions, dayOf(times, -1), dayOf(times, +1));
  }
}

interface AttributionPlan {
  /** trace → session, for traces whose stored spans include some without it. */
  backfill: Map<string, string>;
  /** Every other trace of the batch: looked at again after the insert (a cheap key lookup). */
  recheck: Set<string>;
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
