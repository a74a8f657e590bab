import { Gauge, type Registry } from 'prom-client';

/*
 * Several workers on a ClickHouse cluster: what keeps "the newest computation wins" right when the
 * servers' clocks differ (docs/scaling.md, "Clocks").
 *
 * Every figure and rollup row is stamped with now64() of the server that runs its statement (a
 * round's trace figures: of its look at trace_index, which bounds what they read), and readers
 * keep the newest stamp. A computation that missed an insert (it read before the insert
 * returned) must carry an older stamp than the computation its writer runs after the insert
 * returned. On one server that holds by construction. On several, with clock offsets o1 and o2, a
 * stale computation started at T1 < T (the insert's return) and the fresh one started at T + gap
 * compare as T1 + o1 against T + gap + o2: the fresh one wins whenever gap ≥ o1 − o2. So:
 *
 * 1. ClockBound measures the offset between the ClickHouse server a process reaches and
 *    PostgreSQL's clock (the one reference every process shares) and says whether it is surely
 *    within ±maxOffsetMs/2: two servers that both are differ by at most maxOffsetMs.
 * 2. clockBoundClient refuses every write and every statement that reads the server's clock while
 *    that is not so (a worker also takes no ingest jobs meanwhile, so none fails for it; the gauge
 *    and the log say so), and otherwise starts a statement that reads the clock at least
 *    maxOffsetMs after the process's previous write returned (Spanner's commit wait, on the
 *    reading side): gap ≥ maxOffsetMs ≥ o1 − o2.
 *
 * The probe reads whichever server answers it: a process must reach the cluster through one server
 * (docs/scaling.md), not a balancer that sends each statement elsewhere.
 */

/** What ClockBound reads: the ClickHouse server's time and the reference's (PostgreSQL), in ms since the epoch. */
export interface ClockProbe {
  clickhouseMs(): Promise<number>;
  referenceMs(): Promise<number>;
  /** Called before a check's readings (a connection to take, so that taking it is not timed); returns what ends it. */
  prepare?(): Promise<() => void>;
}

/** One comparison of the two clocks: the server's offset from the reference, within ± uncertaintyMs. */
export interface ClockReading {
  offsetMs: number;
  uncertaintyMs: number;
}

/** Local wall time in ms with sub-ms resolution, monotonic within the process. */
const localNow = () => performance.timeOrigin + performance.now();

/**
 * One reading. Each answer was taken at some local instant between the call and its return, so
 * the server's offset from the local clock lies in [answer − after, answer − before]; the
 * difference of the two such intervals bounds the server's offset from the reference.
 */
export async function readClockOffset(probe: ClockProbe, now: () => number = localNow): Promise<ClockReading> {
  const r0 = now();
  const reference = await probe.referenceMs();
  const r1 = now();
  const c0 = now();
  const server = await probe.clickhouseMs();
  const c1 = now();
  const low = server - c1 - (reference - r0);
  const high = server - c0 - (reference - r1);
  return { offsetMs: (low + high) / 2, uncertaintyMs: (high - low) / 2 };
}

export interface ClockBoundOptions {
  /** Two servers' clocks may differ by at most this: each within half of it of the reference. */
  maxOffsetMs: number;
  /** Between checks. */
  intervalMs?: number;
  /** Readings per check; the one with the least uncertainty (the quickest round trips) counts. */
  readings?: number;
  /** Checks failing in a row before the verdict is given up (the process refuses until one succeeds). */
  failuresToUnknown?: number;
  log: { info(message: string): void; error(message: string, error?: unknown): void };
  registry?: Registry;
  now?: () => number;
}

/** The ClickHouse server's clock is too far from the reference for this process to stamp figures, or not known to be close. */
export class ClockOffsetError extends Error {}

type Verdict = { kind: 'unknown'; why: string } | { kind: 'within'; reading: ClockReading } | { kind: 'beyond'; reading: ClockReading };

/**
 * The verdict on this process's ClickHouse server's clock. It refuses until a check has shown the
 * clock within the bound, whole: the offset plus the reading's uncertainty within half of it (the
 * safe side: a server that may be beyond counts as beyond). A verdict is as old as the last check
 * (intervalMs); after failuresToUnknown failed checks in a row it is given up.
 */
export class ClockBound {
  private verdict: Verdict = { kind: 'unknown', why: 'not checked yet' };
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly gauge: Gauge | undefined;

  constructor(
    private readonly probe: ClockProbe,
    private readonly options: ClockBoundOptions,
  ) {
    this.gauge = options.registry
      ? new Gauge({
          name: 'spanforge_clickhouse_clock_offset_seconds',
          help: "Offset of the ClickHouse server's clock from PostgreSQL's, as last measured (cluster mode)",
          registers: [options.registry],
        })
      : undefined;
  }

  private get half(): number {
    return this.options.maxOffsetMs / 2;
  }

  /** Measures now: the best of a few readings, and gives the verdict. Throws when the readings fail (the verdict stands). */
  async check(): Promise<ClockReading> {
    let best: ClockReading | undefined;
    const release = await this.probe.prepare?.();
    try {
      for (let i = 0; i < (this.options.readings ?? 5); i++) {
        const reading = await readClockOffset(this.probe, this.options.now);
        if (!best || reading.uncertaintyMs < best.uncertaintyMs) best = reading;
      }
    } finally {
      release?.();
    }
    this.failures = 0;
    this.gauge?.set(best!.offsetMs / 1000);
    const within = Math.abs(best!.offsetMs) + best!.uncertaintyMs <= this.half;
    const was = this.verdict.kind;
    this.verdict = within ? { kind: 'within', reading: best! } : { kind: 'beyond', reading: best! };
    if (!within && was !== 'beyond')
      this.options.log.error(
        `the ClickHouse server's clock is ${describe(best!)} off PostgreSQL's, not within ±${this.half} ms (CLICKHOUSE_MAX_CLOCK_OFFSET_MS / 2): ` +
          'this process takes no ingest jobs and stamps no figures until it is; fix the servers’ time sync (chrony, NTP)',
      );
    else if (within && was !== 'within')
      this.options.log.info(`the ClickHouse server's clock is ${describe(best!)} off PostgreSQL's, within ±${this.half} ms`);
    return best!;
  }

  /** Whether the last verdict lets this process stamp. */
  isWithin(): boolean {
    return this.verdict.kind === 'within';
  }

  /** Throws unless the last verdict lets this process stamp. */
  assertWithin(): void {
    const { verdict } = this;
    if (verdict.kind === 'within') return;
    throw new ClockOffsetError(
      verdict.kind === 'beyond'
        ? `the ClickHouse server's clock is ${describe(verdict.reading)} off PostgreSQL's, not within ±${this.half} ms: nothing is stamped until it is`
        : `the ClickHouse server's clock is not known to be within ±${this.half} ms of PostgreSQL's (${verdict.why}): nothing is stamped until it is`,
    );
  }

  /** One scheduled check: a failure is logged, and after failuresToUnknown in a row the verdict is given up. */
  async refresh(): Promise<void> {
    try {
      await this.check();
    } catch (error) {
      this.failures++;
      const limit = this.options.failuresToUnknown ?? 3;
      this.options.log.error(
        `checking the ClickHouse server's clock failed (${this.failures} in a row${this.failures >= limit ? ': the verdict is given up' : ''})`,
        error,
      );
      if (this.failures >= limit) this.verdict = { kind: 'unknown', why: `${this.failures} checks failed in a row` };
    }
  }

  /** Checks now, then every intervalMs. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.intervalMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function describe(reading: ClockReading): string {
  return `${reading.offsetMs.toFixed(1)} ms (± ${reading.uncertaintyMs.toFixed(1)} ms)`;
}

/** A statement that stamps with or compares against the server's clock. */
const READS_SERVER_CLOCK = /\bnow(64)?\s*\(/i;

/** Calls that write; their returns start the spacing. Every write may stamp (a DEFAULT now64(), as spans.ingested_at). */
const WRITES = new Set(['command', 'insert', 'exec']);

/** The bound each wrapped client answers to (for the worker, which takes no jobs while it refuses). */
const bounds = new WeakMap<object, Pick<ClockBound, 'isWithin'>>();

/** The clock bound of a client made by clockBoundClient, if it is one. */
export function clockBoundOf(client: object): Pick<ClockBound, 'isWithin'> | undefined {
  return bounds.get(client);
}

/**
 * The client of a process on a cluster: while `bound` does not find the server's clock within the
 * bound, every write (a column DEFAULT stamps too) and every statement that reads the server's
 * clock (`now()`, `now64()`: the figures' stamps, the sealer's and the erasure's comparisons; no
 * API read does) is refused. Otherwise a statement that reads the clock starts at least `gapMs`
 * after the last write of this process returned (see the top of this file). Only the writes that
 * returned before the statement was issued count: it cannot depend on later ones. A write that
 * fails counts too (it may have been stored all the same).
 */
export function clockBoundClient<C extends object>(
  client: C,
  bound: Pick<ClockBound, 'assertWithin' | 'isWithin'>,
  gapMs: number,
  now: () => number = localNow,
): C {
  let lastWriteReturned = -Infinity;
  const returned = () => void (lastWriteReturned = Math.max(lastWriteReturned, now()));
  const wrapped = new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const call = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (typeof property !== 'string' || !['command', 'query', ...WRITES].includes(property)) return call;
      return async (...args: unknown[]) => {
        const params = args[0] as { query?: string } | undefined;
        const readsClock = typeof params?.query === 'string' && READS_SERVER_CLOCK.test(params.query);
        const writes = WRITES.has(property);
        if (writes || readsClock) bound.assertWithin();
        if (readsClock) {
          const wait = lastWriteReturned + gapMs - now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
        }
        try {
          const result = await call(...args);
          // An insert by exec has returned once its answer is read to the end (insertLines), after the call resolves.
          if (property === 'exec') (result as { stream?: NodeJS.ReadableStream }).stream?.once('end', returned);
          return result;
        } finally {
          if (writes) returned();
        }
      };
    },
  });
  bounds.set(wrapped, bound);
  return wrapped;
}
