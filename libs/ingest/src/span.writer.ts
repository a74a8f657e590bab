import type { Registry } from 'prom-client';
import { Histogram } from 'prom-client';
import { BatchingQueue, type BatchingOptions } from './batching.queue';
import type { RowChunk } from './export-rows';
import type { ProjectRef, SpanRepository } from './span.repository';

/** Transient ClickHouse failures are retried this often inside one flush before the jobs fail (and BullMQ retries them). */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];

/**
 * Upkeep rounds: all traces whose spans were inserted since the last round, at most this many.
 * The short delay lets the chunks of one insert, which settle together, share a round.
 */
const UPKEEP_BATCH: BatchingOptions = { maxItems: 100_000, maxDelayMs: 10 };

/** What one insert leaves to the upkeep: its traces, of one project. */
interface UpkeepItem {
  ref: ProjectRef;
  traces: string[];
  /** Traces whose root this insert wrote with a type that becomes RUN in a GenAI trace (RowChunk.plainRoots). */
  plainRoots: string[];
  /** Spans written again with their trace's session: their traces are not looked at for attribution again. */
  backfill: boolean;
  /** Set by the round: settles when the back-fill this item's traces called for is stored and its figures refreshed. */
  followUp?: Promise<void>;
}

/**
 * Writes exports' rows (already serialised) to ClickHouse in two loops, each one write at a time
 * with group commit (BatchingQueue):
 *
 * 1. Inserts: the rows of many exports in one insert.
 * 2. Upkeep: for every trace inserted since the last round, the derived tables — the trace and
 *    session figures and the daily costs — recomputed from the idempotent rollups; and session
 *    attribution (CONTRACT section 4: the session is a property of the whole trace), which gives
 *    spans stored before the span naming their session that session.
 *
 * Under load a round covers every insert made while the previous round ran, so the upkeep's fixed
 * cost is paid once for many inserts, and inserts do not wait for it. An export's job settles only
 * when its rows are stored and its traces' upkeep is done (including any back-fill it called for):
 * a crash before that retries the job, which finds the same traces again.
 *
 * The back-fill: after a round finds traces that have a session and spans stored without it, those
 * spans are read back with the session and written again (the newer copy replaces the old one in
 * the ReplacingMergeTree, and the session rollup picks it up). Roots that turn out to be the root
 * of a GenAI trace (CONTRACT section 4: RUN) when only their children said so are written again
 * as RUN the same way. The lines join the next insert lazily, so they cost no insert of their own.
 */
export class SpanWriter {
  private readonly inserts: BatchingQueue<RowChunk>;
  private readonly upkeep: BatchingQueue<UpkeepItem>;
  private readonly batchRows: Histogram;
  private readonly insertSeconds: Histogram;
  private readonly upkeepSeconds: Histogram;
  /** Chunks between `write` and their settling. */
  private writing = 0;

  constructor(
    private readonly repository: SpanRepository,
    options: BatchingOptions,
    registry?: Registry,
  ) {
    this.inserts = new BatchingQueue((chunks) => this.insert(chunks), options, (chunk) => chunk.rows);
    this.upkeep = new BatchingQueue((items) => this.keepUp(items), UPKEEP_BATCH, (item) => item.traces.length);
    const registers = registry ? [registry] : [];
    this.batchRows = new Histogram({
      name: 'spanforge_worker_batch_rows',
      help: 'Span rows per ClickHouse insert',
      buckets: [1, 10, 100, 500, 1_000, 5_000, 10_000, 50_000],
      registers,
    });
    this.insertSeconds = new Histogram({
      name: 'spanforge_worker_insert_seconds',
      help: 'Time to insert one batch of spans',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.upkeepSeconds = new Histogram({
      name: 'spanforge_worker_upkeep_seconds',
      help: 'Time of one upkeep round (session attribution, trace and session figures, daily costs)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
  }

  /**
   * Resolves once this export's rows are stored and its traces' upkeep is done. The chunk's text
   * is released once inserted (the caller must not need it afterwards).
   */
  async write(chunk: RowChunk): Promise<void> {
    await this.writeChunk(chunk, false);
  }

  async close(): Promise<void> {
    // An insert adds upkeep, and an upkeep round may add back-fill to the inserts: drain until no write is under way.
    while (this.writing > 0) {
      await this.inserts.flush();
      await this.upkeep.flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([this.inserts.close(), this.upkeep.close()]);
  }

  private async writeChunk(chunk: RowChunk, backfill: boolean): Promise<void> {
    if (chunk.rows === 0) return;
    this.writing++;
    try {
      await this.inserts.add([chunk], { lazy: backfill });
      chunk.text = '';
      const item: UpkeepItem = { ref: { tenantId: chunk.tenantId, projectId: chunk.projectId }, traces: chunk.traces, plainRoots: chunk.plainRoots, backfill };
      await this.upkeep.add([item]);
      await item.followUp;
    } finally {
      this.writing--;
    }
  }

  private async insert(chunks: RowChunk[]): Promise<void> {
    const stop = this.insertSeconds.startTimer();
    this.batchRows.observe(chunks.reduce((n, c) => n + c.rows, 0));
    await withRetries(() => this.repository.insertSpanLines(chunks.map((c) => c.text)));
    stop();
  }

  private async keepUp(items: UpkeepItem[]): Promise<void> {
    const stop = this.upkeepSeconds.startTimer();
    const groups = groupByProject(items);
    const backfills = new Map<string, RowChunk>();
    // Where each group's traces were filed before this round, read once: a retry after their figures
    // were refreshed would otherwise see the new days only, and never empty the days they left.
    const daysBefore = new Map<string, Map<string, string>>();
    await withRetries(async () => {
      backfills.clear();
      for (const [key, group] of groups) {
        const backfill = await this.rewrites(group);
        if (backfill) backfills.set(key, backfill);
        if (!daysBefore.has(key)) daysBefore.set(key, await this.repository.startDays(group.ref, [...group.traces]));
        await this.refreshFigures(group.ref, group.traces, daysBefore.get(key)!);
      }
    });
    for (const [key, backfill] of backfills) {
      const stored = this.writeChunk(backfill, true);
      // Only the exports of the back-filled traces wait for it. A back-fill item never does: its
      // traces are not looked at again, and waiting would chain each back-fill to the next round's.
      const backfilled = new Set(backfill.traces);
      for (const item of groups.get(key)!.items) {
        if (!item.backfill && item.traces.some((traceId) => backfilled.has(traceId))) item.followUp = stored;
      }
    }
    stop();
  }

  /**
   * One look at what is stored of the round's traces: a trace that has a session somewhere and a
   * span stored without it gets those spans back with the session, and a GenAI trace whose root is
   * stored as a plain, HTTP, chain or agent span gets its root back as RUN, as a chunk to write again.
   * Looking after the insert settles races: of two rounds covering the same trace, whichever runs
   * after both inserts sees both the session and the session-less spans (both may back-fill; that
   * is harmless). Traces that only came in as back-fill are not looked at again.
   */
  private async rewrites(group: ProjectGroup): Promise<RowChunk | undefined> {
    const { ref, traces, backfilled, plainRoots } = group;
    const candidates = [...traces].filter((traceId) => !backfilled.has(traceId));
    const sessions = new Map<string, string>();
    const rootsToRun = new Set<string>();
    for (const [traceId, stored] of await this.repository.storedTraces(ref, candidates, [...plainRoots])) {
      if (stored.sessionId && stored.hasSessionless) sessions.set(traceId, stored.sessionId);
      if (stored.rootToRun) rootsToRun.add(traceId);
    }
    if (sessions.size === 0 && rootsToRun.size === 0) return undefined;
    const { text, rows } = await this.repository.rewrittenSpanLines(ref, sessions, rootsToRun);
    if (rows === 0) return undefined;
    return { tenantId: ref.tenantId, projectId: ref.projectId, text, rows, traces: [...new Set([...sessions.keys(), ...rootsToRun])], plainRoots: [], accounting: [] };
  }

  /** The touched traces' and sessions' figures, and the daily costs of their days, recomputed. */
  private async refreshFigures(ref: ProjectRef, traces: Set<string>, daysBefore: Map<string, string>): Promise<void> {
    const traceIds = [...traces];
    const days = await this.repository.refreshTraceFigures(ref, traceIds, daysBefore);
    await this.repository.refreshSessionFigures(ref, traceIds);
    await this.repository.refreshCostDaily(ref, days);
  }
}

interface ProjectGroup {
  ref: ProjectRef;
  items: UpkeepItem[];
  traces: Set<string>;
  /** Traces present only through back-fill. */
  backfilled: Set<string>;
  /** Traces whose root one of the items wrote with an upgradable type. */
  plainRoots: Set<string>;
}

function groupByProject(items: UpkeepItem[]): Map<string, ProjectGroup> {
  const groups = new Map<string, ProjectGroup>();
  for (const item of items) {
    const key = `${item.ref.tenantId}|${item.ref.projectId}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ref: item.ref, items: [], traces: new Set(), backfilled: new Set(), plainRoots: new Set() }));
    group.items.push(item);
    for (const traceId of item.plainRoots) group.plainRoots.add(traceId);
    for (const traceId of item.traces) {
      if (item.backfill && !group.traces.has(traceId)) group.backfilled.add(traceId);
      else if (!item.backfill) group.backfilled.delete(traceId);
      group.traces.add(traceId);
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
