import { AsyncLocalStorage } from 'node:async_hooks';
import { boundParameters, withInlinedParameters } from './inline-parameters';

/**
 * Runs statements a few at a time, sharing the engine's time between participants (each project,
 * and the worker): each participant's statements wait in their own line, and a free slot goes to
 * the waiting participant that has used the least engine time, weighted (start-time fair
 * queuing). A light project's statement therefore goes next after the statement in progress, even
 * while a heavy project and the worker keep the engine busy: what it waits for is at most the
 * remainder of the statements running, not a turn of every other participant's.
 *
 * The time a participant has used counts while it is busy: one that becomes busy starts level with
 * the least-served busy participant, carrying neither credit for its idle time (it cannot take the
 * engine for long) nor debt from an earlier busy period (it is never starved); while busy, one that
 * used more waits until the others caught up.
 *
 * The express lane (embedded engine only, which runs one statement at a time per connection): a
 * slot beside the others, on a connection of its own, for a sequential client's short statement
 * (a dashboard's), so that it does not wait for the remainder of a long statement in progress (a
 * span insert, whose materialized views alone cost 50-90 ms). A statement takes it only when:
 * - every other slot is busy, and with statements without bound parameters only (chDB runs the
 *   statements with bound parameters of all its connections one at a time, in the process);
 * - its participant has no other statement running or waiting;
 * - the same participant's recent statements of the same name were short (one never seen is not);
 * - the participant is not kept off it (the worker);
 * - the participant has not held the lane more than its share (`maxShare`, all of it by default)
 *   of about the last second: capped, a client sending one short statement after another leaves
 *   the statement beside it (an insert) the cores the rest of the time.
 * A flood of one project's statements therefore does not use it, and the cost to everyone else is
 * bounded by what light clients run there: two statements sharing the cores for a while.
 * docs/architecture.md, "Fairness between projects".
 */
/** The worker's name among the participants (its inserts and upkeep); every other is a project id. */
export const WORKER_PARTICIPANT = 'ingest-worker';

/** Which of the scheduler's slots a statement runs in: the shared ones, or the express lane. */
export type Lane = 'main' | 'express';

const laneOfWork = new AsyncLocalStorage<Lane>();

/** The lane of the statement being run here (FairScheduler.run): the connection to run it on. */
export function currentLane(): Lane {
  return laneOfWork.getStore() ?? 'main';
}

export interface ExpressLaneOptions {
  /** Statements that may run in the express lane at once (0: no express lane). */
  slots: number;
  /** A statement whose recent runs (its participant's, of its name) took longer than this on average (ms) waits for the shared slots. */
  lightStatementMs: number;
  /** The most of the lane's time one participant may hold (0-1, default 1: no cap), over about the last `shareWindowMs`. */
  maxShare?: number;
  /** The window of `maxShare` (ms, default 1000): time held in the lane counts less the longer ago it was (an exponential decay over this). */
  shareWindowMs?: number;
}

/** Time held in the express lane, decaying: `ms` as it was at `at`. */
interface LaneUse {
  ms: number;
  at: number;
}

/** What `run` is told about a statement besides its participant. */
export interface StatementInfo {
  /** Its name (a query id's prefix): what the run observers see, and what its time is remembered under. */
  name?: string;
  /** Whether it has bound parameters (default true): on chDB, one at a time in the process. */
  bound?: boolean;
}

/** Statements (a participant's, of one name) whose recent time is remembered, the least recently run forgotten first. */
const REMEMBERED_STATEMENTS = 10_000;

/** One waiting statement: what starts it, and what the express lane needs to know of it. */
interface Waiting {
  resume: (lane: Lane) => void;
  name: string;
  bound: boolean;
}

export class FairScheduler {
  private running = 0;
  /** Of the statements in the shared slots, those with bound parameters. */
  private boundRunning = 0;
  private expressRunning = 0;
  /** Waiting work per participant, in arrival order. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Statements in progress per participant. */
  private readonly active = new Map<string, number>();
  /** Engine time each participant has used (ms, divided by its weight): the least goes next. */
  private readonly used = new Map<string, number>();
  private readonly weights = new Map<string, number>();
  /** Recent time at the engine (ms, a moving average) per participant and statement name: whether it is light. */
  private readonly recentMs = new Map<string, number>();
  private readonly offExpress = new Set<string>();
  /** Each participant's recent time in the express lane (decaying over the share's window). */
  private readonly expressUse = new Map<string, LaneUse>();
  private readonly express: Required<ExpressLaneOptions>;
  private readonly waitObservers: Array<(participant: string, waitedMs: number, lane: Lane) => void> = [];
  private readonly runObservers: Array<(participant: string, ranMs: number, statement: string, lane: Lane) => void> = [];

  /** `clock` (ms) times the statements and the lane's shares: a test's own clock, or the process's. */
  constructor(
    private readonly slots: number,
    express: ExpressLaneOptions = { slots: 0, lightStatementMs: 0 },
    private readonly clock: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a scheduler needs at least one slot, got ${slots}`);
    if (!Number.isInteger(express.slots) || express.slots < 0) throw new Error(`an express lane has 0 or more slots, got ${express.slots}`);
    if (!(express.lightStatementMs >= 0)) throw new Error(`a light statement's time must be 0 or more, got ${express.lightStatementMs}`);
    const { maxShare = 1, shareWindowMs = 1000 } = express;
    if (!(maxShare > 0 && maxShare <= 1)) throw new Error(`a share of the express lane is above 0 and at most 1, got ${maxShare}`);
    if (!(shareWindowMs > 0)) throw new Error(`the express lane's share window must be above 0 ms, got ${shareWindowMs}`);
    this.express = { ...express, maxShare, shareWindowMs };
  }

  /** Whether it has an express lane (the embedded engine's). */
  get hasExpressLane(): boolean {
    return this.express.slots > 0;
  }

  /** Keeps `participant` in the shared slots (the worker: its statements are long, and many at once). */
  keepOffExpress(participant: string): void {
    this.offExpress.add(participant);
  }

  /**
   * A participant whose work is worth `weight` times another's time share (the worker, whose inserts
   * serve every project's ingest, against one project's queries). Default 1.
   */
  setWeight(participant: string, weight: number): void {
    if (!(weight >= 0.001) || !Number.isFinite(weight)) throw new Error(`a weight must be a number from 0.001, got ${weight}`);
    this.weights.set(participant, weight);
  }

  /** Calls `observer` with each statement's wait for its slot (0 when one was free) and the lane it got, as it starts. */
  observeWaits(observer: (participant: string, waitedMs: number, lane: Lane) => void): void {
    this.waitObservers.push(observer);
  }

  /**
   * Calls `observer` with each statement's time at the engine (from its start to its end), its
   * name (what `run` was given; '' without one) and its lane, as it ends.
   */
  observeRuns(observer: (participant: string, ranMs: number, statement: string, lane: Lane) => void): void {
    this.runObservers.push(observer);
  }

  /** Statements waiting for a slot now, of all participants. */
  get queued(): number {
    let total = 0;
    for (const line of this.waiting.values()) total += line.length;
    return total;
  }

  /**
   * Runs `work` when its turn comes; `currentLane()` inside it says which connection to use. The
   * work's own promise is awaited: a statement holds its slot until its result is read.
   */
  async run<T>(participant: string, work: () => Promise<T>, statement: string | StatementInfo = ''): Promise<T> {
    const info = typeof statement === 'string' ? { name: statement } : statement;
    const name = info.name ?? '';
    const bound = info.bound ?? true;
    const asked = this.clock();
    const lane = await this.turn(participant, name, bound);
    const started = this.clock();
    try {
      for (const observe of this.waitObservers) observe(participant, started - asked, lane);
      return await laneOfWork.run(lane, work);
    } finally {
      const ran = this.clock() - started;
      this.finish(participant, name, bound, ran, lane);
      for (const observe of this.runObservers) observe(participant, ran, name, lane);
    }
  }

  private turn(participant: string, name: string, bound: boolean): Promise<Lane> {
    const wasBusy = this.busy(participant);
    if (!wasBusy) this.used.set(participant, this.leastUsedBusy());
    if (this.running < this.slots && this.waiting.size === 0) {
      this.start(participant, bound, 'main');
      return Promise.resolve('main');
    }
    if (!wasBusy && this.expressFor(participant, name)) {
      this.start(participant, bound, 'express');
      return Promise.resolve('express');
    }
    return new Promise((resolve) => {
      let line = this.waiting.get(participant);
      if (!line) this.waiting.set(participant, (line = []));
      line.push({ resume: resolve, name, bound });
      this.next();
    });
  }

  private finish(participant: string, name: string, bound: boolean, ms: number, lane: Lane): void {
    if (lane === 'express') {
      this.expressRunning--;
      // Without a cap (the default) nobody asks what a participant held: nothing to keep.
      if (this.express.maxShare < 1) this.expressUse.set(participant, { ms: this.heldExpress(participant) + ms, at: this.clock() });
    } else {
      this.running--;
      if (bound) this.boundRunning--;
    }
    const left = (this.active.get(participant) ?? 1) - 1;
    if (left > 0) this.active.set(participant, left);
    else this.active.delete(participant);
    this.used.set(participant, (this.used.get(participant) ?? 0) + ms / (this.weights.get(participant) ?? 1));
    this.remember(participant, name, ms);
    this.next();
    this.forgetIdle();
  }

  private next(): void {
    while (this.running < this.slots) {
      const chosen = this.leastUsedWaiting(() => true);
      if (chosen === undefined) break;
      this.begin(chosen, 'main');
    }
    // A free express slot goes to the least-served sequential client waiting (one that arrived while it was taken).
    while (this.expressRunning < this.express.slots) {
      const chosen = this.leastUsedWaiting((candidate) => {
        const line = this.waiting.get(candidate)!;
        return line.length === 1 && !this.active.has(candidate) && this.expressFor(candidate, line[0]!.name);
      });
      if (chosen === undefined) return;
      this.begin(chosen, 'express');
    }
  }

  /** The waiting participant that has used the least time, of those `eligible`; undefined when none is. */
  private leastUsedWaiting(eligible: (participant: string) => boolean): string | undefined {
    let chosen: string | undefined;
    let least = Infinity;
    for (const candidate of this.waiting.keys()) {
      const used = this.used.get(candidate) ?? 0;
      if ((chosen === undefined || used < least) && eligible(candidate)) [chosen, least] = [candidate, used];
    }
    return chosen;
  }

  private begin(participant: string, lane: Lane): void {
    const line = this.waiting.get(participant)!;
    const { resume, bound } = line.shift()!;
    if (line.length === 0) this.waiting.delete(participant);
    this.start(participant, bound, lane);
    resume(lane);
  }

  private start(participant: string, bound: boolean, lane: Lane): void {
    if (lane === 'express') this.expressRunning++;
    else {
      this.running++;
      if (bound) this.boundRunning++;
    }
    this.active.set(participant, (this.active.get(participant) ?? 0) + 1);
  }

  /**
   * Whether a statement of `participant` named `name`, its only one (nothing else of it running),
   * may take an express slot now: one is free; the shared slots are all busy, and with statements
   * without bound parameters only (beside one with, chDB would run it after that one anyway); and
   * the participant's recent statements of that name were short.
   */
  private expressFor(participant: string, name: string): boolean {
    if (this.expressRunning >= this.express.slots || this.offExpress.has(participant)) return false;
    if (this.running < this.slots || this.boundRunning > 0) return false;
    const recent = this.recentMs.get(statementKey(participant, name));
    if (recent === undefined || recent > this.express.lightStatementMs) return false;
    return this.heldExpress(participant) <= this.express.maxShare * this.express.shareWindowMs;
  }

  /**
   * The participant's time in the express lane, each statement's weighing less the longer ago it
   * ended (halving every 0.69 windows): a participant holding the lane a fraction f of the time
   * comes to f windows' worth, so at most `maxShare` windows' worth may take it again.
   */
  private heldExpress(participant: string): number {
    const use = this.expressUse.get(participant);
    if (!use) return 0;
    return use.ms * Math.exp(-Math.max(0, this.clock() - use.at) / this.express.shareWindowMs);
  }

  /** A moving average of the times of the participant's statements of this name (the newest weighs a quarter). */
  private remember(participant: string, name: string, ms: number): void {
    const key = statementKey(participant, name);
    const before = this.recentMs.get(key);
    this.recentMs.delete(key);
    this.recentMs.set(key, before === undefined ? ms : before * 0.75 + ms * 0.25);
    if (this.recentMs.size > REMEMBERED_STATEMENTS) this.recentMs.delete(this.recentMs.keys().next().value!);
  }

  private busy(participant: string): boolean {
    return this.waiting.has(participant) || this.active.has(participant);
  }

  /** The least time used among busy participants (0 when none is busy): where a newly busy one starts. */
  private leastUsedBusy(): number {
    let least = Infinity;
    for (const participant of new Set([...this.waiting.keys(), ...this.active.keys()]))
      least = Math.min(least, this.used.get(participant) ?? 0);
    return least === Infinity ? 0 : least;
  }

  /**
   * An idle participant's count means nothing (it is levelled when it is busy again): dropped. Its
   * time in the express lane is kept until it has decayed to nothing that matters.
   */
  private forgetIdle(): void {
    for (const participant of this.used.keys()) if (!this.busy(participant)) this.used.delete(participant);
    for (const participant of this.expressUse.keys())
      if (!this.busy(participant) && this.heldExpress(participant) < 1) this.expressUse.delete(participant);
  }
}

const statementKey = (participant: string, name: string) => `${participant}\u0000${name}`;

const SCHEDULED = new Set(['query', 'exec', 'command', 'insert']);

/**
 * A call as `scheduler` runs it, and whether chDB binds parameters of it (what the express lane
 * needs to know): on the engine with an express lane (the embedded one), its parameters written
 * into its query where each is checked (inline-parameters.ts; once, here: the session then finds
 * none left to write in).
 */
export function scheduledCall<P>(scheduler: FairScheduler, params: P): { params: P; bound: boolean } {
  const query = (params as { query?: unknown } | undefined)?.query;
  const call =
    scheduler.hasExpressLane && typeof query === 'string'
      ? (withInlinedParameters(params as P & { query: string; query_params?: Record<string, unknown> }) as P)
      : params;
  return { params: call, bound: boundParameters(call) !== undefined };
}

/** A statement's name from its query id (`<name>:<uuid>`, namedStatement), '' when it has none. */
export function statementName(params: unknown): string {
  const queryId = (params as { query_id?: unknown } | undefined)?.query_id;
  return typeof queryId === 'string' && queryId.includes(':') ? queryId.slice(0, queryId.lastIndexOf(':')) : '';
}

/**
 * The same client, with each statement waiting for its slot in `scheduler` as `participant`: in
 * the all-in-one process the worker's inserts and upkeep share the engine's time with the API's
 * projects instead of holding the one embedded engine back to back.
 */
export function scheduledClient<C extends object>(client: C, scheduler: FairScheduler, participant: string): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !SCHEDULED.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const { params, bound } = scheduledCall(scheduler, args[0]);
        const call = [params, ...args.slice(1)];
        return scheduler.run(participant, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, call), {
          name: statementName(params),
          bound,
        });
      };
    },
  });
}
