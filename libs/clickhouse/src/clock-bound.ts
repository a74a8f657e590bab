import { Gauge, type Registry } from 'prom-client';

/*
 * Several workers on a ClickHouse cluster: what keeps "the newest computation wins" right when the
 * servers' clocks differ (docs/scaling.md, "Clocks").
 *
 * Every figure and rollup row is stamped with now64() of the server that runs its statement, and
 * readers keep the newest stamp. A computation that missed an insert (it read before the insert
 * returned) must carry an older stamp than the computation its writer runs after the insert
 * returned. On one server that holds by construction. On several, with clock offsets o1 and o2, a
 * stale computation started at T1 < T (the insert's return) and the fresh one started at T + gap
 * compare as T1 + o1 against T + gap + o2: the fresh one wins whenever gap ≥ o1 − o2. So:
 *
 * 1. ClockBound measures the offset between the ClickHouse server a process reaches and
 *    PostgreSQL's clock (the one reference every process shares) and reports whether it is within
 *    ±maxOffsetMs/2: two servers that both are differ by at most maxOffsetMs.
 * 2. clockBoundClient refuses every statement that reads the server's clock while its server is
 *    beyond the bound (a worker's upkeep rounds then fail and their jobs are retried, by it or by
 *    another worker, until it is back within; the gauge and the log say so), and otherwise starts
 *    it at least maxOffsetMs after the process's previous write returned (Spanner's commit wait,
 *    on the reading side): gap ≥ maxOffsetMs ≥ o1 − o2.
 */

/** What ClockBound reads: the ClickHouse server's time and the reference's (PostgreSQL), in ms since the epoch. */
export interface ClockProbe {
  clickhouseMs(): Promise<number>;
  referenceMs(): Promise<number>;
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
  log: { info(message: string): void; error(message: string, error?: unknown): void };
  registry?: Registry;
  now?: () => number;
}

/** The ClickHouse server's clock is too far from the reference for this process to stamp figures. */
export class ClockOffsetError extends Error {}

export class ClockBound {
  private beyond: ClockReading | undefined;
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

  /** Measures now: the best of a few readings. Beyond the bound only when even its uncertainty cannot explain the offset. */
  async check(): Promise<ClockReading> {
    let best: ClockReading | undefined;
    for (let i = 0; i < (this.options.readings ?? 3); i++) {
      const reading = await readClockOffset(this.probe, this.options.now);
      if (!best || reading.uncertaintyMs < best.uncertaintyMs) best = reading;
    }
    this.gauge?.set(best!.offsetMs / 1000);
    const half = this.options.maxOffsetMs / 2;
    const wasBeyond = this.beyond !== undefined;
    this.beyond = Math.abs(best!.offsetMs) - best!.uncertaintyMs > half ? best : undefined;
    if (this.beyond && !wasBeyond)
      this.options.log.error(
        `the ClickHouse server's clock is ${describe(best!)} off PostgreSQL's, beyond ±${half} ms (CLICKHOUSE_MAX_CLOCK_OFFSET_MS / 2): ` +
          'this process stamps no figures until it is back within; fix the servers’ time sync (chrony, NTP)',
      );
    else if (!this.beyond && wasBeyond) this.options.log.info(`the ClickHouse server's clock is back within bounds (${describe(best!)})`);
    return best!;
  }

  /** Throws when the last check found the server's clock beyond the bound. */
  assertWithin(): void {
    if (this.beyond)
      throw new ClockOffsetError(
        `the ClickHouse server's clock is ${describe(this.beyond)} off PostgreSQL's, beyond ±${this.options.maxOffsetMs / 2} ms: figures are not stamped until it is back within`,
      );
  }

  /** Checks now (and says what it found), then every intervalMs. A failed check is logged and leaves the last verdict. */
  async start(): Promise<void> {
    const check = async () => {
      try {
        return await this.check();
      } catch (error) {
        this.options.log.error('checking the ClickHouse server clock failed (the last verdict stands)', error);
        return undefined;
      }
    };
    const first = await check();
    if (first && !this.beyond)
      this.options.log.info(
        `the ClickHouse server's clock is ${describe(first)} off PostgreSQL's, within ±${this.options.maxOffsetMs / 2} ms`,
      );
    this.timer = setInterval(() => void check(), this.options.intervalMs ?? 10_000);
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

/** Calls that write; their returns start the spacing. */
const WRITES = new Set(['command', 'insert', 'exec']);

/**
 * The client of a process on a cluster: every statement that reads the server's clock (`now()`,
 * `now64()`: the figures' stamps, the sealer's and the erasure's comparisons; no API read does) is
 * refused while `bound` finds the server's clock beyond it, and otherwise starts at least `gapMs`
 * after the last write of this process returned (see the top of this file). Only the writes that
 * returned before the statement was issued count: it cannot depend on later ones.
 */
export function clockBoundClient<C extends object>(
  client: C,
  bound: Pick<ClockBound, 'assertWithin'>,
  gapMs: number,
  now: () => number = localNow,
): C {
  let lastWriteReturned = -Infinity;
  const returned = () => void (lastWriteReturned = Math.max(lastWriteReturned, now()));
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const call = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (typeof property !== 'string' || !['command', 'query', ...WRITES].includes(property)) return call;
      return async (...args: unknown[]) => {
        const params = args[0] as { query?: string } | undefined;
        if (typeof params?.query === 'string' && READS_SERVER_CLOCK.test(params.query)) {
          bound.assertWithin();
          const wait = lastWriteReturned + gapMs - now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
        }
        const result = await call(...args);
        if (WRITES.has(property)) returned();
        // An insert by exec has returned once its answer is read to the end (insertLines), after the call resolves.
        if (property === 'exec') (result as { stream?: NodeJS.ReadableStream }).stream?.once('end', returned);
        return result;
      };
    },
  });
}
