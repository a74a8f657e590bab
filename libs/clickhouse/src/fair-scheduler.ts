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
 */
/** The worker's name among the participants (its inserts and upkeep); every other is a project id. */
export const WORKER_PARTICIPANT = 'ingest-worker';

export class FairScheduler {
  private running = 0;
  /** Waiting work per participant, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Statements in progress per participant. */
  private readonly active = new Map<string, number>();
  /** Engine time each participant has used (ms, divided by its weight): the least goes next. */
  private readonly used = new Map<string, number>();
  private readonly weights = new Map<string, number>();
  private readonly waitObservers: Array<(participant: string, waitedMs: number) => void> = [];
  private readonly runObservers: Array<(participant: string, ranMs: number, statement: string) => void> = [];

  constructor(private readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a scheduler needs at least one slot, got ${slots}`);
  }

  /**
   * A participant whose work is worth `weight` times another's time share (the worker, whose inserts
   * serve every project's ingest, against one project's queries). Default 1.
   */
  setWeight(participant: string, weight: number): void {
    if (!(weight > 0) || !Number.isFinite(weight)) throw new Error(`a weight must be a positive number, got ${weight}`);
    this.weights.set(participant, weight);
  }

  /** Calls `observer` with each statement's wait for its slot (0 when one was free), as it starts. */
  observeWaits(observer: (participant: string, waitedMs: number) => void): void {
    this.waitObservers.push(observer);
  }

  /**
   * Calls `observer` with each statement's time at the engine (from its start to its end) and its
   * name (what `run` was given; '' without one), as it ends.
   */
  observeRuns(observer: (participant: string, ranMs: number, statement: string) => void): void {
    this.runObservers.push(observer);
  }

  /** Statements waiting for a slot now, of all participants. */
  get queued(): number {
    let total = 0;
    for (const line of this.waiting.values()) total += line.length;
    return total;
  }

  async run<T>(participant: string, work: () => Promise<T>, statement = ''): Promise<T> {
    const asked = performance.now();
    await this.turn(participant);
    const started = performance.now();
    for (const observe of this.waitObservers) observe(participant, started - asked);
    try {
      return await work();
    } finally {
      const ran = performance.now() - started;
      this.finish(participant, ran);
      for (const observe of this.runObservers) observe(participant, ran, statement);
    }
  }

  private turn(participant: string): Promise<void> {
    if (!this.busy(participant)) this.used.set(participant, this.leastUsedBusy());
    if (this.running < this.slots && this.waiting.size === 0) {
      this.start(participant);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let line = this.waiting.get(participant);
      if (!line) this.waiting.set(participant, (line = []));
      line.push(resolve);
      this.next();
    });
  }

  private finish(participant: string, ms: number): void {
    this.running--;
    const left = (this.active.get(participant) ?? 1) - 1;
    if (left > 0) this.active.set(participant, left);
    else this.active.delete(participant);
    this.used.set(participant, (this.used.get(participant) ?? 0) + ms / (this.weights.get(participant) ?? 1));
    this.next();
    this.forgetIdle();
  }

  private next(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let chosen = '';
      let least = Infinity;
      for (const candidate of this.waiting.keys()) {
        const used = this.used.get(candidate) ?? 0;
        if (used < least) [chosen, least] = [candidate, used];
      }
      const line = this.waiting.get(chosen)!;
      const begin = line.shift()!;
      if (line.length === 0) this.waiting.delete(chosen);
      this.start(chosen);
      begin();
    }
  }

  private start(participant: string): void {
    this.running++;
    this.active.set(participant, (this.active.get(participant) ?? 0) + 1);
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

  /** An idle participant's count means nothing (it is levelled when it is busy again): dropped. */
  private forgetIdle(): void {
    for (const participant of this.used.keys()) if (!this.busy(participant)) this.used.delete(participant);
  }
}

const SCHEDULED = new Set(['query', 'exec', 'command', 'insert']);

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
      return (...args: unknown[]) =>
        scheduler.run(participant, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), statementName(args[0]));
    },
  });
}
