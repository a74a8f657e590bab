import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';
import { isTransientClickHouseError } from '@spanforge/clickhouse';
import { BatchingQueue, type BatchingOptions } from './batching.queue';
import { newDeadLetterId, type DeadLetter } from './dead-letter.repository';
import type { ChunkPart, RowChunk } from './export-rows';
import type { AccountingRow, ProjectRef, SpanRepository, StoredTrace, Tombstone, TraceLook } from './span.repository';
import { spanPartition } from './span.row';

/**
 * Transient ClickHouse failures (isTransientClickHouseError) are retried this often inside one
 * flush before the jobs fail (and the queue retries them). A refusal of the rows is not retried.
 */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];

/**
 * Seconds added to a round's own time when it looks for tombstones written since its look: the
 * tombstone's time is the clock of the server that stored it, the window the clock of the one asked.
 */
const ERASED_SINCE_MARGIN_S = 60;

/** Partitions one insert may touch: ClickHouse refuses more than 100 by default (max_partitions_per_insert_block). */
export const MAX_PARTITIONS_PER_INSERT = 100;

/**
 * Inserts one isolation may make to find the rows ClickHouse refuses (halving the batch each
 * time). Past it, a refused block of one export is dead-lettered whole: every row is kept for a
 * replay, and a batch of thousands of bad rows cannot hold the writer for minutes.
 */
export const MAX_ISOLATION_INSERTS = 64;

/** Where the writer reports: Logger (libs/runtime) fits. */
export interface WriterLog {
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

/** What the writer needs besides its repository. */
export interface SpanWriterSinks {
  /** Keeps rows ClickHouse refused (DeadLetterRepository.add). */
  deadLetters: { add(letters: DeadLetter[]): Promise<void> };
  /**
   * Erasure (ErasureRepository): sessions' rollup and figures rebuilt without erased traces, and
   * jobs run again to remove spans of their traces stored after them.
   */
  erasures: {
    rebuildSessionsWithoutErased(project: ProjectRef, sessions: string[]): Promise<unknown>;
    runAgain(project: ProjectRef, jobIds: string[], reason: string): Promise<void>;
  };
  log: WriterLog;
  registry?: Registry;
  /** deadLetteredSpansCounter of the process (the failed-jobs sweeper counts into it too). */
  deadLettered?: Counter;
}

/** `spanforge_dead_lettered_spans_total{reason}`: one per process and registry. */
export function deadLetteredSpansCounter(registry?: Registry): Counter {
  return new Counter({
    name: 'spanforge_dead_lettered_spans_total',
    help: 'Spans kept in dead_letters instead of stored, by reason (store_refused: ClickHouse refused the row; retries_exhausted, stalled, poison_export: the whole export)',
    labelNames: ['reason'],
    registers: registry ? [registry] : [],
  });
}

/**
 * What a write throws when its traces' upkeep round failed (the round may have stopped part-way,
 * some figures written and some not). The queue keeps each failed attempt's stack, whose first
 * line carries the message: `isUpkeepFailure` tells a retry that it must look at where its traces
 * are filed rather than trust the figures (an attempt that failed in its insert left none).
 */
export class UpkeepFailedError extends Error {
  constructor(cause: unknown) {
    super(`${UPKEEP_FAILED}: ${describeError(cause)}`, { cause });
    this.name = 'UpkeepFailedError';
  }
}

const UPKEEP_FAILED = 'the upkeep of its traces failed';

/** Whether a failed attempt's stack (as the queue keeps it: `Job.stacktrace`) is of an UpkeepFailedError. */
export function isUpkeepFailure(stack: string): boolean {
  return stack.split('\n', 1)[0]!.includes(UPKEEP_FAILED);
}

/**
 * Upkeep rounds: all traces whose spans were inserted since the last round, at most this many.
 * The short delay lets the chunks of one insert, which settle together, share a round.
 */
const UPKEEP_BATCH: BatchingOptions = { maxItems: 100_000, maxDelayMs: 10 };

/** What one insert leaves to the upkeep: its traces, of one project. */
export interface UpkeepItem {
  ref: ProjectRef;
  traces: string[];
  /** Sessions this insert wrote rows of (RowChunk.sessions). */
  sessions: string[];
  /** Traces whose root this insert wrote with a type that becomes RUN in a GenAI trace (RowChunk.plainRoots). */
  plainRoots: string[];
  /** Spans written again with their trace's session: their traces are not looked at for attribution again. */
  backfill: boolean;
  /**
   * Of a back-fill's traces, those whose figures it changes, as its round's look found them: roots
   * written again as RUN (the trace's cost rows count the root under its new type). The others were
   * looked at for their session, which changes the session's figures and none of the trace's (it
   * already had that session). A copy may also carry a change the look did not find (rewrittenSpanLines
   * works both out as it reads): the round of the insert that made that change refreshes its figures.
   */
  refigured?: ReadonlySet<string>;
  /** From a job that ran before (RowChunk.rerun). */
  rerun: boolean;
  /** Set by the round: settles when the back-fill this item's traces called for is stored and its figures refreshed. */
  followUp?: Promise<void>;
  /** Set by the round when this item's project's upkeep failed. */
  failure?: unknown;
}

/** What an export's chunk leaves to the upkeep. */
function upkeepOf(
  chunk: Pick<RowChunk, 'tenantId' | 'projectId' | 'traces' | 'sessions' | 'plainRoots'>,
  how: Pick<UpkeepItem, 'backfill' | 'rerun' | 'refigured'>,
): UpkeepItem {
  const { tenantId, projectId, traces, sessions, plainRoots } = chunk;
  return { ref: { tenantId, projectId }, traces, sessions, plainRoots, ...how };
}

/**
 * Writes exports' rows (already serialised) to ClickHouse in two loops, each one write at a time
 * with group commit (BatchingQueue):
 *
 * 1. Inserts: the rows of many exports in one insert.
 * 2. Upkeep: for every trace inserted since the last round, the derived tables — the trace and
 *    session figures and the daily costs — recomputed from the idempotent rollups; and session
 *    attribution (the session is a property of the whole trace: any span naming it gives it to all), which gives
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
 * of a GenAI trace (shown as RUN) when only their children said so are written again
 * as RUN the same way. The lines join the next insert lazily, so they cost no insert of their own.
 * The back-fill's round refreshes the figures of its sessions, and those of its traces only where
 * a root became RUN: a span given its trace's session changes no figure of the trace.
 */
export class SpanWriter {
  private readonly inserts: BatchingQueue<RowChunk>;
  private readonly upkeep: BatchingQueue<UpkeepItem>;
  private readonly batchRows: Histogram;
  private readonly insertSeconds: Histogram;
  private readonly upkeepSeconds: Histogram;
  private readonly deadLettered: Counter;
  /** Chunks between `write` and their settling. */
  private writing = 0;

  constructor(
    private readonly repository: SpanRepository,
    options: BatchingOptions,
    private readonly sinks: SpanWriterSinks,
  ) {
    this.inserts = new BatchingQueue(
      (chunks) => this.insert(chunks),
      options,
      (chunk) => chunk.rows,
    );
    this.upkeep = new BatchingQueue(
      (items) => this.keepUp(items),
      UPKEEP_BATCH,
      (item) => item.traces.length,
    );
    const registers = sinks.registry ? [sinks.registry] : [];
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
    this.deadLettered = sinks.deadLettered ?? deadLetteredSpansCounter();
  }

  /**
   * Resolves once this export's rows are stored and its traces' upkeep is done. The chunk's rows
   * (its parts' lines) are released once inserted (the caller must not need them afterwards).
   */
  async write(chunk: RowChunk): Promise<void> {
    await this.writeChunk(chunk);
  }

  /**
   * The upkeep of an export's traces alone, none of its rows inserted (the round may still write
   * back-fill, as any round): for a job that failed for good, whose last run may have stopped
   * part-way through its round (a trace left filed under two minutes).
   * Where its traces are filed is looked up, not trusted, and every figure of theirs is recomputed
   * from what is stored, as a retry would. Resolves when that round is done.
   */
  async recheck(chunk: Pick<RowChunk, 'tenantId' | 'projectId' | 'traces' | 'sessions' | 'plainRoots'>): Promise<void> {
    if (chunk.traces.length === 0) return;
    this.writing++;
    try {
      await this.keptUp(upkeepOf(chunk, { backfill: false, rerun: true }));
    } finally {
      this.writing--;
    }
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

  /**
   * Inserts a chunk and settles once its traces are kept up. `refigured` when it is spans the upkeep
   * writes again (a back-fill): those of its traces whose figures it changes.
   */
  private async writeChunk(chunk: RowChunk, refigured?: ReadonlySet<string>): Promise<void> {
    if (chunk.rows === 0) return;
    const backfill = refigured !== undefined;
    this.writing++;
    try {
      await this.inserts.add([chunk], { lazy: backfill });
      chunk.parts = [];
      await this.keptUp(upkeepOf(chunk, { backfill, rerun: chunk.rerun === true, refigured }));
    } finally {
      this.writing--;
    }
  }

  /** Settles when the item's round is done, with the back-fill it called for; throws the round's failure as an UpkeepFailedError. */
  private async keptUp(item: UpkeepItem): Promise<void> {
    await this.upkeep.add([item]);
    if (item.failure !== undefined) throw new UpkeepFailedError(item.failure);
    // A back-fill's own write throws its own failure (its round's is an UpkeepFailedError already).
    await item.followUp;
  }

  private async insert(chunks: RowChunk[]): Promise<void> {
    const stop = this.insertSeconds.startTimer();
    this.batchRows.observe(chunks.reduce((n, c) => n + c.rows, 0));
    for (const pieces of insertsOf(chunks)) await this.insertOrIsolate(pieces);
    stop();
  }

  /**
   * One insert. When ClickHouse refuses it for its content (not for its own state), the rows it
   * refuses are found by halving, every other row is stored, and the refused ones go to the
   * dead letters: one tenant's bad row never takes another's rows with it, nor holds them back.
   */
  private async insertOrIsolate(pieces: Piece[]): Promise<void> {
    try {
      await withRetries(() => this.repository.insertSpanLines(pieces.flatMap((p) => p.lines)));
      return;
    } catch (error) {
      if (isTransientClickHouseError(error)) throw error;
      const refused = await this.isolate(pieces.flatMap(linesOf), error);
      await this.deadLetter(refused);
    }
  }

  /**
   * Inserts what ClickHouse takes of these lines (the whole was refused) and answers the lines it
   * refuses. If it takes none, a bad row cannot be told from a store refusing everything: the
   * error is thrown, the jobs retry, and an export whose retries run out is dead-lettered whole.
   */
  private async isolate(lines: Line[], refusal: unknown): Promise<Refused[]> {
    const refused: Refused[] = [];
    let stored = 0;
    let budget = MAX_ISOLATION_INSERTS;
    const attempt = async (block: Line[]): Promise<void> => {
      try {
        budget--;
        await withRetries(() => this.repository.insertSpanLines(block.map((line) => line.bytes)));
        stored += block.length;
      } catch (error) {
        if (isTransientClickHouseError(error)) throw error;
        if (block.length === 1 || budget <= 0) {
          for (const line of block) refused.push({ line, error });
          return;
        }
        await halves(block);
      }
    };
    const halves = async (block: Line[]) => {
      const middle = block.length >> 1;
      await attempt(block.slice(0, middle));
      await attempt(block.slice(middle));
    };
    if (lines.length > 1) await halves(lines);
    if (stored === 0) throw refusal;
    return refused;
  }

  /** Keeps refused rows in dead_letters, counts them in each export's accounting, and says so. */
  private async deadLetter(refused: Refused[]): Promise<void> {
    if (refused.length === 0) return;
    const now = Date.now();
    const letters: DeadLetter[] = refused.map(({ line, error }) => {
      const text = line.bytes.toString('utf8');
      return {
        tenantId: line.chunk.tenantId,
        projectId: line.chunk.projectId,
        id: newDeadLetterId(),
        kind: 'span_row',
        reason: 'store_refused',
        error: describeError(error),
        exportId: line.chunk.exportId,
        spans: 1,
        payload: text.trimEnd(),
        deadLetteredAt: now,
        replayedAt: null,
        retentionDays: retentionOfLine(text),
      };
    });
    await this.sinks.deadLetters.add(letters);
    const byExport = new Map<RowChunk, number>();
    for (const { line } of refused) byExport.set(line.chunk, (byExport.get(line.chunk) ?? 0) + 1);
    const accounting: AccountingRow[] = [];
    for (const [chunk, spans] of byExport) {
      // Rows the upkeep writes again (no export) were counted when first stored.
      if (chunk.exportId === '') continue;
      accounting.push({
        tenant_id: chunk.tenantId,
        project_id: chunk.projectId,
        minute: chunk.minute,
        outcome: 'dead_lettered',
        reason: 'store_refused',
        batch_id: chunk.exportId,
        requests: 0,
        spans,
        bytes: 0,
      });
      this.sinks.log.warn(
        `project ${chunk.projectId}: ${spans} span(s) of export ${chunk.exportId || '(upkeep rewrite)'} refused by ClickHouse and dead-lettered: ${describeError(refused.find((r) => r.line.chunk === chunk)!.error)}`,
      );
    }
    if (accounting.length > 0) await this.repository.insertAccounting(accounting);
    this.deadLettered.inc({ reason: 'store_refused' }, refused.length);
  }

  private async keepUp(items: UpkeepItem[]): Promise<void> {
    const stop = this.upkeepSeconds.startTimer();
    const groups = groupByProject(items);
    const backfills = new Map<string, Backfill>();
    // Each project's upkeep on its own: one that fails fails only the jobs of its own inserts (they
    // retry), never another project's.
    for (const [key, group] of groups) {
      let attempts = 0;
      try {
        await withRetries(async () => {
          // An attempt after a failed one may follow an emptied minute whose costs the failed one never
          // recomputed: its traces are rechecked, as a job's that ran before (refreshTraceFigures).
          if (attempts++ > 0) for (const traceId of refiguredTraces(group)) group.rerun.add(traceId);
          backfills.delete(key);
          // Traces that only came in as back-fill are not looked at again: their sessions are the back-fill's own.
          const candidates = [...group.traces].filter((traceId) => !group.backfilled.has(traceId));
          const lookedAt = performance.now();
          const looked = await this.repository.storedTraces(group.ref, candidates, [...group.plainRoots]);
          // A back-fill read just before its traces were erased may have been stored after their job ran.
          const backfillErased = await this.repository.erasedTraces(group.ref, [...group.backfilled]);
          const { stored, erased } = splitErased(looked.traces, backfillErased);
          const backfill = await this.rewrites(group.ref, stored, looked.look);
          if (backfill) backfills.set(key, backfill);
          const rebuilt = sessionsOfErased(group, erased);
          const sessions = sessionsToRefresh(group.sessions, stored).filter((sessionId) => !rebuilt.has(sessionId));
          await this.refreshFigures(group, sessions, erased.traces, looked.look);
          await this.addErasedSince(group, erased, lookedAt);
          if (erased.jobs.size > 0) await this.afterErasure(group, erased);
        });
      } catch (error) {
        this.sinks.log.error(
          `project ${group.ref.projectId}: upkeep of ${group.traces.size} trace(s) failed; their exports will be retried`,
          error,
        );
        for (const item of group.items) item.failure = error;
        // Its back-fill is still written (the rows are right), but this round may have stopped before
        // the traces' figures: the back-fill's round refreshes every one of them whole.
        const backfill = backfills.get(key);
        if (backfill) backfills.set(key, { chunk: backfill.chunk, refigured: new Set(backfill.chunk.traces) });
      }
    }
    for (const [key, backfill] of backfills) {
      const stored = this.writeChunk(backfill.chunk, backfill.refigured);
      // Only the exports of the back-filled traces wait for it. A back-fill item never does: its
      // traces are not looked at again, and waiting would chain each back-fill to the next round's.
      const backfilled = new Set(backfill.chunk.traces);
      for (const item of groups.get(key)!.items) {
        if (!item.backfill && item.traces.some((traceId) => backfilled.has(traceId))) item.followUp = stored;
      }
    }
    stop();
  }

  /**
   * From one look at what is stored of the round's traces (`stored`, read after the round's
   * inserts): a trace that has a session somewhere and a span stored without it gets those spans
   * back with the session, and a GenAI trace whose root is stored as a plain, HTTP, chain or agent
   * span gets its root back as RUN, as a chunk to write again. Looking after the insert settles
   * races: of two rounds covering the same trace, whichever runs after both inserts sees both the
   * session and the session-less spans (both may back-fill; that is harmless).
   */
  private async rewrites(ref: ProjectRef, stored: Map<string, StoredTrace>, look: TraceLook | undefined): Promise<Backfill | undefined> {
    const sessions = new Map<string, string>();
    const rootsToRun = new Set<string>();
    for (const [traceId, trace] of stored) {
      if (trace.sessionId && trace.hasSessionless) sessions.set(traceId, trace.sessionId);
      if (trace.rootToRun) rootsToRun.add(traceId);
    }
    if (sessions.size === 0 && rootsToRun.size === 0) return undefined;
    const traces = [...new Set([...sessions.keys(), ...rootsToRun])];
    const { text, rows } = await this.repository.rewrittenSpanLines(ref, traces, look);
    if (rows === 0) return undefined;
    const chunk: RowChunk = {
      tenantId: ref.tenantId,
      projectId: ref.projectId,
      exportId: '',
      minute: 0,
      parts: partsOfStoredLines(textLines(text)),
      rows,
      traces,
      sessions: [...new Set(sessions.values())],
      plainRoots: [],
      accounting: [],
      conversions: new Map(),
      redactions: 0,
    };
    return { chunk, refigured: rootsToRun };
  }

  /**
   * The touched traces' and sessions' figures, and the daily costs and trace metrics of their
   * minutes, recomputed. `sessions`: see sessionsToRefresh. `look`: the round's; it bounds the
   * refresh only if it found every trace refreshed (SpanRepository.refreshTraceFigures).
   */
  private async refreshFigures(
    group: ProjectGroup,
    sessions: string[],
    erased: ReadonlySet<string>,
    look: TraceLook | undefined,
  ): Promise<void> {
    const { ref } = group;
    const traces = refiguredTraces(group).filter((traceId) => !erased.has(traceId));
    const { minutes } = await this.repository.refreshTraceFigures(ref, traces, [...group.rerun], look);
    await this.repository.refreshSessionFigures(ref, sessions);
    await this.repository.refreshDailyCosts(ref, minutes);
    await this.repository.refreshTraceMetrics(ref, minutes);
  }

  /**
   * The round's traces erased while it ran (after its look at `lookedAt`, performance.now()):
   * their jobs may have deleted before the figures the round wrote. Tombstones since the look,
   * with a minute more for the clocks of a cluster's servers.
   */
  private async addErasedSince(group: ProjectGroup, erased: ErasedInRound, lookedAt: number): Promise<void> {
    const since = await this.repository.recentlyErased(group.ref, (performance.now() - lookedAt) / 1_000 + ERASED_SINCE_MARGIN_S);
    for (const [traceId, by] of since) if (group.traces.has(traceId) && !erased.traces.has(traceId)) addErased(erased, traceId, by);
  }

  /**
   * Spans of erased traces were stored after their erasure (a late span, or a back-fill read
   * before the tombstones): the round left them out of the trace figures it refreshed; the
   * sessions their rows may be in (those they name in the trace index or named when erased, and
   * every session the round's exports with them wrote) get their rollup and figures rebuilt
   * without them; and their erasure jobs run again to delete them (docs/data-policy.md, "Erasure").
   */
  private async afterErasure(group: ProjectGroup, erased: ErasedInRound): Promise<void> {
    await this.sinks.erasures.rebuildSessionsWithoutErased(group.ref, [...sessionsOfErased(group, erased)]);
    const jobIds = [...erased.jobs];
    const reason = `spans of ${erased.traces.size} erased trace(s) were stored after the erasure; run again to remove them`;
    await this.sinks.erasures.runAgain(group.ref, jobIds, reason);
    this.sinks.log.warn(`project ${group.ref.projectId}: ${reason} (erasure job(s) ${jobIds.join(', ')})`);
  }
}

/** The erased traces a round's look found (StoredTrace.erased): their jobs and every session their rows name. */
interface ErasedInRound {
  traces: Set<string>;
  jobs: Set<string>;
  sessions: Set<string>;
}

/**
 * A round's look at its stored traces, without the erased ones, and the erased traces of its
 * back-fill (`backfilled`, from their tombstones): nothing is back-filled or refreshed for them,
 * and their sessions are rebuilt without them instead of refreshed.
 */
function splitErased(
  looked: Map<string, StoredTrace>,
  backfilled: Map<string, Tombstone>,
): { stored: Map<string, StoredTrace>; erased: ErasedInRound } {
  const erased: ErasedInRound = { traces: new Set(), jobs: new Set(), sessions: new Set() };
  const stored = new Map<string, StoredTrace>();
  for (const [traceId, trace] of looked) {
    if (trace.erased) addErased(erased, traceId, trace.erased);
    else stored.set(traceId, trace);
  }
  for (const [traceId, by] of backfilled) addErased(erased, traceId, by);
  return { stored, erased };
}

/** The sessions a round's erased traces may be counted in: those they name, and every session an export with one wrote. */
function sessionsOfErased(group: ProjectGroup, erased: ErasedInRound): Set<string> {
  const sessions = new Set(erased.sessions);
  if (erased.traces.size === 0) return sessions;
  for (const item of group.items)
    if (item.traces.some((traceId) => erased.traces.has(traceId))) for (const sessionId of item.sessions) sessions.add(sessionId);
  return sessions;
}

function addErased(erased: ErasedInRound, traceId: string, by: Tombstone): void {
  erased.traces.add(traceId);
  erased.jobs.add(by.jobId);
  for (const sessionId of by.sessions) erased.sessions.add(sessionId);
}

export interface ProjectGroup {
  ref: ProjectRef;
  items: UpkeepItem[];
  traces: Set<string>;
  /** Traces present only through back-fill. */
  backfilled: Set<string>;
  /** Traces whose figures the round refreshes: those of its exports, and those a back-fill changes (UpkeepItem.refigured). */
  refigured: Set<string>;
  /** Sessions the items' inserts wrote rows of. */
  sessions: Set<string>;
  /** Traces whose root one of the items wrote with an upgradable type. */
  plainRoots: Set<string>;
  /** Traces of items from jobs that ran before: where they are filed is looked up, not trusted. */
  rerun: Set<string>;
}

/**
 * The sessions whose figures a round refreshes, each once: those its inserts wrote rows of
 * (`written`: the sessions rollup rows they added), and those its traces have as stored after the
 * inserts (`stored`: a trace whose earlier spans named its session). A trace given a session later
 * is given it by an insert whose own round refreshes that session. A trace stored under two
 * sessions counts under both in the rollup; the stored look names only the greatest, so the
 * inserts' own list is needed.
 */
export function sessionsToRefresh(written: Iterable<string>, stored: Map<string, StoredTrace>): string[] {
  const sessions = new Set(written);
  for (const { sessionId } of stored.values()) if (sessionId) sessions.add(sessionId);
  return [...sessions];
}

/** A round's items by project (exported for its tests). */
export function groupByProject(items: UpkeepItem[]): Map<string, ProjectGroup> {
  const groups = new Map<string, ProjectGroup>();
  for (const item of items) {
    const key = `${item.ref.tenantId}|${item.ref.projectId}`;
    let group = groups.get(key);
    if (!group)
      groups.set(
        key,
        (group = {
          ref: item.ref,
          items: [],
          traces: new Set(),
          backfilled: new Set(),
          refigured: new Set(),
          sessions: new Set(),
          plainRoots: new Set(),
          rerun: new Set(),
        }),
      );
    group.items.push(item);
    for (const sessionId of item.sessions) group.sessions.add(sessionId);
    for (const traceId of item.plainRoots) group.plainRoots.add(traceId);
    if (item.rerun) for (const traceId of item.traces) group.rerun.add(traceId);
    for (const traceId of item.traces) {
      if (item.backfill && !group.traces.has(traceId)) group.backfilled.add(traceId);
      else if (!item.backfill) group.backfilled.delete(traceId);
      if (!item.backfill || item.refigured?.has(traceId)) group.refigured.add(traceId);
      group.traces.add(traceId);
    }
  }
  return groups;
}

/** The round's traces whose figures it refreshes: all but those whose back-fill changed none of theirs. */
export function refiguredTraces(group: ProjectGroup): string[] {
  return [...group.refigured];
}

/** Spans the upkeep writes again (SpanWriter.rewrites), and the traces whose figures that changes. */
interface Backfill {
  chunk: RowChunk;
  refigured: ReadonlySet<string>;
}

/** One chunk's rows going into one insert (ChunkPart.lines). */
interface Piece {
  chunk: RowChunk;
  lines: Buffer[];
}

interface Line {
  chunk: RowChunk;
  /** One JSONEachRow line with its '\n', in UTF-8. */
  bytes: Buffer;
}

interface Refused {
  line: Line;
  error: unknown;
}

/**
 * The inserts a batch makes: one, unless its rows are in more partitions than one insert may touch;
 * then the partitions are split over several inserts (rows of one export may land in different ones,
 * which is harmless: a retry writes the same rows again, and copies collapse).
 */
export function insertsOf(chunks: RowChunk[]): Piece[][] {
  const partitions = new Set<number>();
  for (const chunk of chunks) for (const part of chunk.parts) partitions.add(part.partition);
  if (partitions.size <= MAX_PARTITIONS_PER_INSERT)
    return [chunks.flatMap((chunk) => chunk.parts.map((part) => ({ chunk, lines: part.lines })))];
  const byPartition = new Map<number, Piece[]>();
  for (const chunk of chunks) {
    for (const part of chunk.parts) {
      const pieces = byPartition.get(part.partition) ?? [];
      pieces.push({ chunk, lines: part.lines });
      byPartition.set(part.partition, pieces);
    }
  }
  const inserts: Piece[][] = [];
  const sorted = [...byPartition.keys()].sort((a, b) => a - b);
  for (let start = 0; start < sorted.length; start += MAX_PARTITIONS_PER_INSERT) {
    inserts.push(sorted.slice(start, start + MAX_PARTITIONS_PER_INSERT).flatMap((partition) => byPartition.get(partition)!));
  }
  return inserts;
}

function linesOf(piece: Piece): Line[] {
  return piece.lines.map((bytes) => ({ chunk: piece.chunk, bytes }));
}

/** The JSONEachRow lines of `text` (lines ending in '\n'; the last may lack it). */
function textLines(text: string): string[] {
  const lines: string[] = [];
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length - 1;
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  return lines;
}

/** start_time as ClickHouse writes it (`YYYY-MM-DD hh:mm:ss…`) or as the row builder does (`seconds.nanoseconds`). */
const STORED_START = /"start_time":"(?:(\d{4})-(\d{2})-(\d{2})|(\d{10})\.)/;

const STORED_RETENTION = /"retention_days":(\d+)/;

/** The retention a span row line was written under (0 when it names none). */
function retentionOfLine(line: string): number {
  return Number(STORED_RETENTION.exec(line)?.[1] ?? 0);
}

/** The partition of a stored line (spanPartition), from its start and retention. */
function partitionOfLine(line: string): number {
  const match = STORED_START.exec(line);
  if (!match) return 0;
  const retention = retentionOfLine(line);
  const start =
    match[4] !== undefined
      ? BigInt(match[4]) * 1_000_000_000n
      : BigInt(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) * 1_000_000n;
  return spanPartition(start, retention);
}

/** JSONEachRow lines of `spans` (read back, or dead-lettered), each ending in '\n', by their partition. */
export function partsOfStoredLines(lines: Iterable<string>): ChunkPart[] {
  const parts = new Map<number, ChunkPart>();
  for (const line of lines) {
    const partition = partitionOfLine(line);
    let part = parts.get(partition);
    if (!part) parts.set(partition, (part = { partition, lines: [] }));
    part.lines.push(Buffer.from(line));
  }
  return [...parts.values()];
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Retries transient failures only; a refusal fails at once. */
async function withRetries(work: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length || !isTransientClickHouseError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
    }
  }
}
