import type { DeadLetter } from './dead-letter.repository';
import type { RowChunk } from './export-rows';
import type { AccountingRow, ProjectRef, SpanRepository, StoredTrace, StoredTraces, Tombstone, TraceLook } from './span.repository';
import {
  MAX_PARTITIONS_PER_INSERT,
  SpanWriter,
  UpkeepFailedError,
  groupByProject,
  insertsOf,
  refiguredTraces,
  type UpkeepItem,
} from './span.writer';

/** Rows as the writer hands them to the store (UTF-8 lines), read back as text. */
const textOf = (lines: Uint8Array[]) => lines.map((line) => Buffer.from(line).toString('utf8')).join('');

/**
 * The writer's ordering rules, against a recording stand-in for the repository (the SQL itself is
 * covered by the ingest integration tests on real ClickHouse). Each write is gated so the test
 * decides when it finishes.
 */
/** The look storedTraces answers when it finds any trace. */
const LOOK: TraceLook = {
  at: '2026-12-01 10:00:12.345678',
  groups: [{ from: '2026-12-01 10:00:00.000000000', to: '2026-12-01 10:00:09.000000000', traceIds: ['A', 'B', 'C'] }],
};

class RecordingRepository {
  readonly log: string[] = [];
  /** trace → what storedTraces answers. */
  readonly stored = new Map<string, StoredTrace>();
  /** What rewrittenSpanLines answers, call after call (nothing once used up). */
  sessionless: Array<{ text: string; rows: number }> = [];
  /** What rewrittenSpanLines was asked for, call after call. */
  readonly rewriteRequests: string[][] = [];
  /** The look each rewrittenSpanLines call was given (its groups bound the rewrites' reads). */
  readonly rewriteLooks: Array<TraceLook | undefined> = [];
  private readonly gates = new Map<string, () => void>();

  /** Makes the next call whose log entry starts with `prefix` wait for release(prefix). */
  hold(prefix: string): void {
    this.gates.set(prefix, () => undefined);
  }

  release(prefix: string): void {
    const open = this.gates.get(prefix);
    this.gates.delete(prefix);
    open?.();
  }

  private async record(entry: string): Promise<void> {
    this.log.push(entry);
    for (const prefix of this.gates.keys()) {
      if (entry.startsWith(prefix)) await new Promise<void>((resolve) => this.gates.set(prefix, resolve));
    }
  }

  async insertSpanLines(lines: Uint8Array[]): Promise<void> {
    await this.record(`insert ${textOf(lines).trim().split('\n').join(',')}`);
  }

  /** The plainRoots of each storedTraces call. */
  readonly plainRootRequests: string[][] = [];

  async storedTraces(_ref: ProjectRef, traceIds: string[], plainRoots: string[]): Promise<StoredTraces> {
    this.plainRootRequests.push([...plainRoots].sort());
    await this.record(`stored ${[...traceIds].sort().join(',')}`);
    const traces = new Map(traceIds.filter((t) => this.stored.has(t)).map((t) => [t, this.stored.get(t)!]));
    return traces.size > 0 ? { traces, look: LOOK } : { traces };
  }

  async rewrittenSpanLines(_ref: ProjectRef, traceIds: string[], look?: TraceLook): Promise<{ text: string; rows: number }> {
    this.rewriteRequests.push([...traceIds].sort());
    this.rewriteLooks.push(look);
    await this.record('sessionless');
    return this.sessionless.shift() ?? { text: '', rows: 0 };
  }

  /** trace → the tombstone erasedTraces answers (the round asks for its back-filled traces first, and for all its others last). */
  readonly tombstones = new Map<string, Tombstone>();
  /** The traces of each erasedTraces call that asks for any, in order (kept out of `log`). */
  readonly tombstoneRequests: string[][] = [];

  async erasedTraces(_ref: ProjectRef, traceIds: string[]): Promise<Map<string, Tombstone>> {
    if (traceIds.length > 0) this.tombstoneRequests.push([...traceIds].sort());
    return new Map(traceIds.filter((t) => this.tombstones.has(t)).map((t) => [t, this.tombstones.get(t)!]));
  }

  /** Tombstones recentlyErased answers: those in `tombstones` (a round asks at its end). */
  recentlyErasedCalls = 0;

  async recentlyErased(_ref: ProjectRef, withinSeconds: number): Promise<Map<string, Tombstone>> {
    if (!(withinSeconds >= 60)) throw new Error(`a window of ${withinSeconds} s leaves no margin for the clocks`);
    this.recentlyErasedCalls++;
    return new Map(this.tombstones);
  }

  /** Minutes refreshTraceFigures reports beyond none (those the traces left): refreshDailyCosts and refreshTraceMetrics get them. */
  previousMinutes: number[] = [];

  /** The look each refreshTraceFigures call with traces was given. */
  readonly figureLooks: Array<TraceLook | undefined> = [];

  async refreshTraceFigures(
    _ref: ProjectRef,
    traceIds: string[],
    _recheck: string[] = [],
    look?: TraceLook,
  ): Promise<{ minutes: number[] }> {
    // As the repository does: no statement for no trace.
    if (traceIds.length === 0) return { minutes: [] };
    this.figureLooks.push(look);
    await this.record(`figures ${[...traceIds].sort().join(',')}`);
    return { minutes: this.previousMinutes };
  }

  /** The sessions of each refreshSessionFigures call. */
  readonly sessionRefreshes: string[][] = [];

  async refreshSessionFigures(_ref: ProjectRef, sessions: string[]): Promise<void> {
    this.sessionRefreshes.push([...sessions].sort());
  }

  async refreshDailyCosts(_ref: ProjectRef, minutes: number[]): Promise<void> {
    await this.record(minutes.length > 0 ? `daily costs +${minutes.join(',')}` : 'daily costs');
  }

  async refreshTraceMetrics(_ref: ProjectRef, minutes: number[]): Promise<void> {
    if (minutes.length > 0) await this.record(`trace metrics +${minutes.join(',')}`);
  }
}

function chunk(line: string, traces: string[], plainRoots: string[] = [], sessions: string[] = []): RowChunk {
  return {
    tenantId: 't',
    projectId: 'p',
    exportId: `export-${line}`,
    minute: 0,
    parts: [{ partition: 202612, lines: [Buffer.from(`${line}\n`)] }],
    rows: 1,
    traces,
    sessions,
    plainRoots,
    accounting: [],
    conversions: new Map(),
    redactions: 0,
  };
}

/** Erasure jobs the writer asked to run again, and sessions it had rebuilt without erased traces, call after call. */
const erasuresRunAgain: string[][] = [];
const sessionsRebuilt: string[][] = [];

const sinks = {
  deadLetters: { add: async () => undefined },
  erasures: {
    rebuildSessionsWithoutErased: async (_project: ProjectRef, sessions: string[]) => void sessionsRebuilt.push([...sessions].sort()),
    runAgain: async (_project: ProjectRef, jobIds: string[]) => void erasuresRunAgain.push([...jobIds].sort()),
  },
  log: { warn: () => undefined, error: () => undefined },
};

/** Waits until the recorded calls satisfy `done` (at most 5 s): no fixed sleep, which a busy machine outruns. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('SpanWriter', () => {
  let repository: RecordingRepository;
  let writer: SpanWriter;

  beforeEach(() => {
    repository = new RecordingRepository();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 5 }, sinks);
  });

  afterEach(() => writer.close());

  it('settles a write only after its traces are kept up, and lets the next insert run meanwhile', async () => {
    repository.hold('figures');
    let firstSettled = false;
    const first = writer.write(chunk('a1', ['A'])).then(() => (firstSettled = true));
    await until(() => repository.log.includes('figures A'));
    expect(repository.log).toEqual(['insert a1', 'stored A', 'figures A']);
    const second = writer.write(chunk('b1', ['B']));
    await until(() => repository.log.includes('insert b1'));
    // The second insert did not wait for the first round's upkeep.
    expect(repository.log).toContain('insert b1');
    expect(firstSettled).toBe(false);
    repository.release('figures');
    await Promise.all([first, second]);
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures A', 'figures B']);
  });

  it("recomputes the daily costs and trace metrics of the minutes the round's traces were filed under before, too", async () => {
    const minute = Date.UTC(2026, 10, 12, 23, 59);
    repository.previousMinutes = [minute];
    await writer.write(chunk('a1', ['A']));
    expect(repository.log).toEqual(['insert a1', 'stored A', 'figures A', `daily costs +${minute}`, `trace metrics +${minute}`]);
  });

  it('keeps up every insert made during a round in one next round', async () => {
    repository.hold('figures');
    const writes = [writer.write(chunk('a1', ['A']))];
    // The first round holds in its figures while the next two inserts are made.
    await until(() => repository.log.includes('figures A'));
    for (const [line, trace] of [
      ['b1', 'B'],
      ['c1', 'C'],
    ] as const) {
      writes.push(writer.write(chunk(line, [trace])));
      await until(() => repository.log.includes(`insert ${line}`));
    }
    repository.release('figures');
    await Promise.all(writes);
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures A', 'figures B,C']);
  });

  it('writes back-filled spans with the next insert and settles the write that called for them only after', async () => {
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.sessionless = [{ text: 'a0-with-session\n', rows: 1 }];
    repository.hold('insert a0');
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 100 }, sinks);
    let settled = false;
    const first = writer.write(chunk('a1', ['A'])).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(repository.log).toEqual(['insert a1', 'stored A', 'sessionless', 'figures A', 'daily costs']);
    // The back-fill waits for company rather than paying an insert alone right away...
    const second = writer.write(chunk('b1', ['B']));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(repository.log.at(-1)).toBe('insert a0-with-session,b1');
    expect(settled).toBe(false);
    repository.release('insert a0');
    await Promise.all([first, second]);
    // ...and its session's figures are refreshed again, without looking for its session a second time (only whether it was erased since: its tombstones).
    // A's own figures stand: a span given its trace's session changes none of them, nor where it is filed.
    expect(repository.log.slice(-3)).toEqual(['stored B', 'figures B', 'daily costs']);
    expect(repository.rewriteRequests).toEqual([['A']]);
    expect(repository.sessionRefreshes).toEqual([['s1'], ['s1']]);
  });

  it('writes again, in one read, the session-less spans and the roots that have to become RUN, and no others', async () => {
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.stored.set('B', { sessionId: '', hasSessionless: true, rootToRun: true });
    repository.stored.set('C', { sessionId: 's3', hasSessionless: false, rootToRun: false });
    repository.sessionless = [{ text: 'a0\nb-root-as-run\n', rows: 2 }];
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await Promise.all([writer.write(chunk('a1', ['A'])), writer.write(chunk('b1', ['B'])), writer.write(chunk('c1', ['C']))]);
    // A gets its session, B's root becomes RUN; C has nothing to fix. The back-filled traces are not looked at again.
    expect(repository.rewriteRequests).toEqual([['A', 'B']]);
    // In the groups of the look that found them.
    expect(repository.rewriteLooks).toEqual([LOOK]);
    expect(repository.log).toContain('insert a0,b-root-as-run');
    // The back-fill's own round looks at none of its traces (the repository asks ClickHouse nothing for none).
    expect(repository.log.filter((e) => e.startsWith('stored'))).toEqual(['stored A,B,C', 'stored ']);
    expect(repository.sessionRefreshes).toEqual([['s1', 's3'], ['s1']]);
    // B's figures change (its root counts as RUN in its cost rows now); A's, given only its session, do not.
    expect(repository.log.at(-2)).toBe('figures B');
    // The first round looked for every trace it refreshed, so its look bounds their refresh; the
    // back-fill's round did not look at B, so its refresh reads B's bounds itself.
    expect(repository.figureLooks).toEqual([LOOK, undefined]);
  });

  it("refreshes a back-fill's traces' figures where the trace also came in with an insert of the round", async () => {
    // A's round back-fills A's session; before that back-fill's round, an export brings more of A.
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.sessionless = [{ text: 'a0\n', rows: 1 }];
    repository.hold('insert a0');
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 100 }, sinks);
    const first = writer.write(chunk('a1', ['A']));
    await until(() => repository.log.includes('sessionless'));
    const second = writer.write(chunk('a2', ['A']));
    await until(() => repository.log.some((e) => e.startsWith('insert a0')));
    repository.release('insert a0');
    await Promise.all([first, second]);
    expect(repository.log).toContain('insert a0,a2');
    // The round of the back-fill and the new export refreshes A: the new spans change its figures.
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures A', 'figures A']);
  });

  it('refreshes the traces of a back-fill whole when the round that called for it failed', async () => {
    // A's round finds A's session and reads the back-fill, then fails in the daily costs (a refusal:
    // not retried): A's figures may be older than its spans, so the back-fill's round refreshes A too.
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.sessionless = [{ text: 'a0\n', rows: 1 }];
    let failures = 1;
    const refreshDailyCosts = repository.refreshDailyCosts.bind(repository);
    repository.refreshDailyCosts = async (ref, minutes) => {
      if (failures-- > 0) throw Object.assign(new Error('refused'), { code: '36' });
      await refreshDailyCosts(ref, minutes);
    };
    await expect(writer.write(chunk('a1', ['A']))).rejects.toBeInstanceOf(UpkeepFailedError);
    await until(() => repository.log.filter((e) => e.startsWith('figures')).length === 2);
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures A', 'figures A']);
    expect(repository.log).toContain('insert a0');
  });

  it('refreshes the figures of the sessions its traces have as stored, each session once', async () => {
    repository.stored.set('A', { sessionId: 's1', hasSessionless: false, rootToRun: false });
    repository.stored.set('B', { sessionId: 's1', hasSessionless: false, rootToRun: false });
    repository.stored.set('C', { sessionId: '', hasSessionless: true, rootToRun: false });
    repository.stored.set('D', { sessionId: 's2', hasSessionless: false, rootToRun: false });
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await Promise.all([writer.write(chunk('a1', ['A', 'B'])), writer.write(chunk('c1', ['C'])), writer.write(chunk('d1', ['D']))]);
    expect(repository.sessionRefreshes).toEqual([['s1', 's2']]);
  });

  it('refreshes the sessions its inserts wrote rows of, also where the stored trace names a greater one', async () => {
    // T is stored under s1; this insert brings spans of T under s0 (the sessions rollup lists T under both).
    repository.stored.set('T', { sessionId: 's1', hasSessionless: false, rootToRun: false });
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await writer.write(chunk('t1', ['T'], [], ['s0']));
    expect(repository.sessionRefreshes).toEqual([['s0', 's1']]);
  });

  it('leaves erased traces out of every figure and back-fill it refreshes, and has their jobs run again', async () => {
    // E was erased (job j1) before this export stored a late span of it; its rows name s1 and s2.
    // K is an ordinary trace of s3; F, erased by job j2, is stored in no session; the export with E
    // and F also wrote rows of s0 (of E's in one insert with s1: the trace index names the greater).
    erasuresRunAgain.length = 0;
    sessionsRebuilt.length = 0;
    repository.stored.set('E', { sessionId: 's2', hasSessionless: true, rootToRun: true, erased: { jobId: 'j1', sessions: ['s1', 's2'] } });
    repository.stored.set('F', { sessionId: '', hasSessionless: true, rootToRun: false, erased: { jobId: 'j2', sessions: [] } });
    repository.stored.set('K', { sessionId: 's3', hasSessionless: false, rootToRun: false });
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await Promise.all([writer.write(chunk('e1', ['E', 'F'], [], ['s0', 's1'])), writer.write(chunk('k1', ['K'], [], ['s3']))]);
    expect(repository.rewriteRequests).toEqual([]);
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures K']);
    // Refreshed from their rollup, s0, s1 and s2 would count E: they are rebuilt without it instead.
    expect(repository.sessionRefreshes).toEqual([['s3']]);
    expect(sessionsRebuilt).toEqual([['s0', 's1', 's2']]);
    expect(erasuresRunAgain).toEqual([['j1', 'j2']]);
  });

  it('leaves out a back-fill whose trace was erased after the back-fill was read, and has its job run again', async () => {
    // A's round finds A's session and reads its session-less spans; A is erased (job j3) after that round, before they are stored.
    erasuresRunAgain.length = 0;
    sessionsRebuilt.length = 0;
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.sessionless = [{ text: 'a0\n', rows: 1 }];
    const insertSpanLines = repository.insertSpanLines.bind(repository);
    repository.insertSpanLines = async (lines) => {
      if (lines.some((line) => textOf([line]) === 'a0\n')) repository.tombstones.set('A', { jobId: 'j3', sessions: ['s1'] });
      await insertSpanLines(lines);
    };
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await writer.write(chunk('a1', ['A']));
    expect(repository.log).toContain('insert a0');
    // The back-fill's round reads its traces' tombstones first; both rounds read the recent ones at their end.
    expect(repository.tombstoneRequests).toEqual([['A']]);
    expect(repository.recentlyErasedCalls).toBe(2);
    // The export's round refreshed s1 (A was not erased yet); the back-fill's round refreshes nothing of A.
    expect(repository.sessionRefreshes).toEqual([['s1'], []]);
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures A']);
    expect(sessionsRebuilt).toEqual([['s1']]);
    expect(erasuresRunAgain).toEqual([['j3']]);
  });

  it('has the job of a trace erased while its round ran run again, after the figures it refreshed', async () => {
    // The look finds T as any trace; its erasure (job j4) lands before the round's end.
    erasuresRunAgain.length = 0;
    sessionsRebuilt.length = 0;
    repository.stored.set('T', { sessionId: 's1', hasSessionless: false, rootToRun: false });
    const refreshTraceMetrics = repository.refreshTraceMetrics.bind(repository);
    repository.refreshTraceMetrics = async (ref, minutes) => {
      repository.tombstones.set('T', { jobId: 'j4', sessions: ['s1'] });
      // Another trace of the project erased meanwhile, not the round's: its job is not the round's business.
      repository.tombstones.set('U', { jobId: 'j5', sessions: [] });
      await refreshTraceMetrics(ref, minutes);
    };
    await writer.write(chunk('t1', ['T']));
    expect(repository.log.filter((e) => e.startsWith('figures'))).toEqual(['figures T']);
    expect(repository.recentlyErasedCalls).toBe(1);
    // s1 was refreshed before T's tombstone was seen: rebuilt without T after.
    expect(sessionsRebuilt).toEqual([['s1']]);
    expect(erasuresRunAgain).toEqual([['j4']]);
  });

  it("tells the stored-trace check which roots the round's inserts wrote plain, so a retried root is typed RUN again", async () => {
    repository.stored.set('B', { sessionId: '', hasSessionless: false, rootToRun: true });
    repository.sessionless = [{ text: 'b-root-as-run\n', rows: 1 }];
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 20 }, sinks);
    await Promise.all([
      writer.write(chunk('a1', ['A'])),
      writer.write(chunk('b-root', ['B'], ['B'])),
      writer.write(chunk('c-root', ['C'], ['C'])),
    ]);
    // One round for the three inserts, then the back-fill's round, which wrote no root plain.
    expect(repository.plainRootRequests).toEqual([['B', 'C'], []]);
    expect(repository.rewriteRequests).toEqual([['B']]);
  });

  it('does not make a back-fill wait for the back-fill of the round it rides in', async () => {
    // A's round back-fills A; that back-fill shares the next round with C, whose own back-fill is held.
    repository.stored.set('A', { sessionId: 's1', hasSessionless: true, rootToRun: false });
    repository.stored.set('C', { sessionId: 's2', hasSessionless: true, rootToRun: false });
    repository.sessionless = [
      { text: 'a0\n', rows: 1 },
      { text: 'c0\n', rows: 1 },
    ];
    repository.hold('insert c0');
    await writer.close();
    writer = new SpanWriter(repository as unknown as SpanRepository, { maxItems: 100, maxDelayMs: 100 }, sinks);
    const a = writer.write(chunk('a1', ['A']));
    // A's insert goes out after 100 ms and its round right after; its back-fill then waits up to 100 ms for company.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const c = writer.write(chunk('c1', ['C']));
    // A settles although C's back-fill is held (before, A's back-fill waited for it, and so did A).
    await a;
    expect(repository.log).toContain('insert a0,c1');
    let cSettled = false;
    void c.then(() => (cSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(repository.log.at(-1)).toBe('insert c0');
    expect(cSettled).toBe(false);
    repository.release('insert c0');
    await c;
  });

  it('has a round that failed part-way and is tried again recheck its traces: an emptied minute may not be recomputed yet', async () => {
    const rechecks: string[][] = [];
    repository.refreshTraceFigures = async (_ref: ProjectRef, _traceIds: string[], recheck: string[] = []) => {
      rechecks.push([...recheck].sort());
      return { minutes: [] };
    };
    let failures = 1;
    repository.refreshDailyCosts = async () => {
      // No code: a transient failure (a timeout, the network), which the round tries again itself.
      if (failures-- > 0) throw new Error('clickhouse hiccup');
    };
    await writer.write(chunk('a1', ['A', 'B']));
    expect(rechecks).toEqual([[], ['A', 'B']]);
  });

  it('has the traces of a job that ran before rechecked, in the round it shares with others', async () => {
    const rechecks: string[][] = [];
    repository.refreshTraceFigures = async (_ref: ProjectRef, _traceIds: string[], recheck: string[] = []) => {
      rechecks.push([...recheck].sort());
      return { minutes: [] };
    };
    await Promise.all([writer.write({ ...chunk('a1', ['A', 'B']), rerun: true }), writer.write(chunk('c1', ['C']))]);
    await writer.write(chunk('d1', ['D']));
    // One round for a1 and c1 (the rerun's traces only), then one for d1 (nothing to recheck).
    expect(rechecks).toEqual([['A', 'B'], []]);
  });

  it('fails the writes of a round whose upkeep keeps failing, so their jobs are retried', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      repository.refreshTraceFigures = async () => {
        throw new Error('clickhouse down');
      };
      const write = writer.write(chunk('a1', ['A']));
      const failed = expect(write).rejects.toThrow(new UpkeepFailedError(new Error('clickhouse down')));
      await jest.advanceTimersByTimeAsync(10_000);
      await failed;
    } finally {
      jest.useRealTimers();
    }
  });
});

/** ClickHouse's refusal of an insert's content (what @clickhouse/client throws: a numeric code). */
class Refusal extends Error {
  readonly code = '27';
}

describe('SpanWriter when ClickHouse refuses rows', () => {
  let repository: RecordingRepository;
  let letters: DeadLetter[];
  let accounting: AccountingRow[];
  let warnings: string[];
  let writer: SpanWriter;

  beforeEach(() => {
    repository = new RecordingRepository();
    letters = [];
    accounting = [];
    warnings = [];
    // This store refuses any insert holding a line that starts with "bad".
    repository.insertSpanLines = async (bytes: Uint8Array[]) => {
      const lines = textOf(bytes).trim().split('\n');
      if (lines.some((line) => line.startsWith('bad'))) throw new Refusal('Cannot parse input');
      repository.log.push(`insert ${lines.join(',')}`);
    };
    (repository as unknown as { insertAccounting: (rows: AccountingRow[]) => Promise<void> }).insertAccounting = async (rows) => {
      accounting.push(...rows);
    };
    writer = new SpanWriter(
      repository as unknown as SpanRepository,
      { maxItems: 100, maxDelayMs: 20 },
      {
        deadLetters: { add: async (added) => void letters.push(...added) },
        erasures: sinks.erasures,
        log: { warn: (message) => warnings.push(message), error: () => undefined },
      },
    );
  });
  afterEach(() => writer.close());

  function exportChunk(exportId: string, lines: string[], projectId = 'p'): RowChunk {
    return {
      tenantId: 't',
      projectId,
      exportId,
      minute: 60,
      parts: [{ partition: 202612, lines: lines.map((l) => Buffer.from(`${l}\n`)) }],
      rows: lines.length,
      traces: [exportId],
      sessions: [],
      plainRoots: [],
      accounting: [],
      conversions: new Map(),
      redactions: 0,
    };
  }

  it('stores every row of the batch but the refused one, which goes to the dead letters with its export and reason', async () => {
    await Promise.all([
      writer.write(exportChunk('e1', ['a1', 'bad1', 'a2'])),
      writer.write(exportChunk('e2', ['b1', 'b2', 'b3'], 'other')),
    ]);

    const inserted = repository.log.filter((entry) => entry.startsWith('insert ')).flatMap((entry) => entry.slice(7).split(','));
    expect(inserted.sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
    expect(
      letters.map((l) => ({
        payload: l.payload,
        exportId: l.exportId,
        projectId: l.projectId,
        kind: l.kind,
        reason: l.reason,
        error: l.error,
      })),
    ).toEqual([
      { payload: 'bad1', exportId: 'e1', projectId: 'p', kind: 'span_row', reason: 'store_refused', error: 'Cannot parse input' },
    ]);
    expect(accounting).toEqual([
      {
        tenant_id: 't',
        project_id: 'p',
        minute: 60,
        outcome: 'dead_lettered',
        reason: 'store_refused',
        batch_id: 'e1',
        requests: 0,
        spans: 1,
        bytes: 0,
      },
    ]);
    expect(warnings).toEqual([
      expect.stringContaining('1 span(s) of export e1 refused by ClickHouse and dead-lettered: Cannot parse input'),
    ]);
  });

  it('fails a batch that holds nothing ClickHouse takes (a bad row cannot be told from a store refusing all): the job retries', async () => {
    await expect(writer.write(exportChunk('e1', ['bad1', 'bad2']))).rejects.toThrow('Cannot parse input');
    expect(letters).toEqual([]);
  });

  it('splits a batch whose rows start in more months than one insert takes', () => {
    const chunks = [0, 1].map((half) => ({
      ...exportChunk(`e${half}`, []),
      parts: Array.from({ length: 80 }, (_, i) => ({ partition: 190001 + half * 80 + i, lines: [Buffer.from(`r${half}-${i}\n`)] })),
    }));
    const inserts = insertsOf(chunks);
    expect(inserts.map((pieces) => new Set(pieces.map((p) => textOf(p.lines))).size)).toEqual([
      MAX_PARTITIONS_PER_INSERT,
      160 - MAX_PARTITIONS_PER_INSERT,
    ]);
    expect(insertsOf([exportChunk('small', ['x'])])).toHaveLength(1);
  });
});

describe("a round's traces whose figures it refreshes", () => {
  const ref = { tenantId: 't', projectId: 'p' };
  const item = (traces: string[], how: Partial<UpkeepItem> = {}): UpkeepItem => ({
    ref,
    traces,
    sessions: [],
    plainRoots: [],
    backfill: false,
    rerun: false,
    ...how,
  });
  const sessionOnly = (traces: string[]) => item(traces, { backfill: true, refigured: new Set() });
  const asRun = (traces: string[]) => item(traces, { backfill: true, refigured: new Set(traces) });
  const refigured = (items: UpkeepItem[]) => refiguredTraces([...groupByProject(items).values()][0]!).sort();

  it('leaves out the traces a back-fill only gave their session', () => {
    expect(refigured([sessionOnly(['A']), asRun(['B']), item(['C'])])).toEqual(['B', 'C']);
  });

  it('keeps a trace that also came in with an export, whichever item comes first', () => {
    expect(refigured([sessionOnly(['A']), item(['A'])])).toEqual(['A']);
    expect(refigured([item(['A']), sessionOnly(['A'])])).toEqual(['A']);
  });

  it('keeps a trace whose root another back-fill of the round wrote as RUN, whichever comes first', () => {
    expect(refigured([sessionOnly(['A']), asRun(['A'])])).toEqual(['A']);
    expect(refigured([asRun(['A']), sessionOnly(['A'])])).toEqual(['A']);
  });
});
