import type { Registry } from 'prom-client';
import { Histogram } from 'prom-client';
import { BatchingQueue, type BatchingOptions } from './batching.queue';
import type { RowChunk } from './export-rows';
import type { ProjectRef, SpanRepository } from './span.repository';

/** Transient ClickHouse failures are retried this often inside one flush before the jobs fail (and BullMQ retries them). */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];

/**
 * Batches exports' rows (already serialised) into one insert, and gives every span its trace's
 * session id — including spans stored before the span naming the session arrived (CONTRACT
 * section 4: the session is a property of the whole trace).
 */
export class SpanWriter {
  private readonly queue: BatchingQueue<RowChunk>;
  private readonly batchRows: Histogram;
  private readonly insertSeconds: Histogram;

  constructor(
    private readonly repository: SpanRepository,
    options: BatchingOptions,
    registry?: Registry,
  ) {
    this.queue = new BatchingQueue((chunks) => this.store(chunks), options, (chunk) => chunk.rows);
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

  /** Resolves once this export's rows are stored. */
  write(chunk: RowChunk): Promise<void> {
    return chunk.rows === 0 ? Promise.resolve() : this.queue.add([chunk]);
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async store(chunks: RowChunk[]): Promise<void> {
    const stop = this.insertSeconds.startTimer();
    this.batchRows.observe(chunks.reduce((n, c) => n + c.rows, 0));
    await withRetries(async () => {
      await this.repository.insertSpanLines(chunks.map((c) => c.text));
      for (const group of groupByProject(chunks).values()) {
        await this.attribute(group.ref, group.traces);
        await this.refreshFigures(group.ref, group.traces);
      }
    });
    stop();
  }

  /**
   * After the insert, one look at what is stored of the batch's traces: a trace that has a
   * session somewhere and a span stored without it gets those spans rewritten with it. Looking
   * after the insert settles races: of two batches writing the same trace, whichever inserts
   * second sees both the session and the session-less spans (both may back-fill; that is harmless).
   */
  private async attribute(ref: ProjectRef, traces: Map<string, [number, number]>): Promise<void> {
    const sessions = new Map<string, string>();
    for (const [traceId, stored] of await this.repository.storedTraces(ref, [...traces.keys()])) {
      if (stored.sessionId && stored.hasSessionless) sessions.set(traceId, stored.sessionId);
    }
    if (sessions.size === 0) return;
    let from = Infinity;
    let to = -Infinity;
    for (const traceId of sessions.keys()) {
      const [first, last] = traces.get(traceId)!;
      from = Math.min(from, first);
      to = Math.max(to, last);
    }
    await this.repository.backfillSessions(ref, sessions, day(from - DAY_S), day(to + DAY_S));
  }

  /** After the spans (and any back-fill) are stored: the touched traces' and sessions' figures, recomputed. */
  private async refreshFigures(ref: ProjectRef, traces: Map<string, [number, number]>): Promise<void> {
    let from = Infinity;
    let to = -Infinity;
    for (const [first, last] of traces.values()) {
      from = Math.min(from, first);
      to = Math.max(to, last);
    }
    await this.repository.refreshFigures(ref, [...traces.keys()], day(from - DAY_S), day(to + DAY_S));
    // A trace's day is the day it starts; its first span may be in an earlier batch, so the day before is included.
    const days = new Set<string>();
    for (const [first] of traces.values()) {
      days.add(day(first));
      days.add(day(first - DAY_S));
    }
    await this.repository.refreshCostDaily(ref, [...days]);
  }
}

/** A trace's spans rarely start more than a day apart: the back-fill scans its days ± 1. */
const DAY_S = 86_400;

function day(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/** Per project: its traces with their earliest and latest span start (seconds). */
function groupByProject(chunks: RowChunk[]): Map<string, { ref: ProjectRef; traces: Map<string, [number, number]> }> {
  const groups = new Map<string, { ref: ProjectRef; traces: Map<string, [number, number]> }>();
  for (const chunk of chunks) {
    const key = `${chunk.tenantId}|${chunk.projectId}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ref: { tenantId: chunk.tenantId, projectId: chunk.projectId }, traces: new Map() }));
    for (const [traceId, first, last] of chunk.traces) {
      const known = group.traces.get(traceId);
      group.traces.set(traceId, known ? [Math.min(known[0], first), Math.max(known[1], last)] : [first, last]);
    }
  }
  return groups;
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
