/**
 * Runs statements a few at a time, taking turns between projects: each project's statements wait
 * in their own line, and a free slot goes to the next project in the round, not to whoever queued
 * most. With one slot (embedded chDB runs one statement at a time per process anyway) a project's
 * statement waits for at most one statement of each other project that is waiting, whatever they
 * have queued; with N slots (a ClickHouse server), a busy project holds at most its turn of them.
 */
export class FairScheduler {
  private running = 0;
  /** Waiting work per project, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** When each project last got a slot (a counter): the one served longest ago goes next. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(private readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a scheduler needs at least one slot, got ${slots}`);
  }

  /** Statements waiting for a slot now, of all projects. */
  get queued(): number {
    let total = 0;
    for (const line of this.waiting.values()) total += line.length;
    return total;
  }

  async run<T>(project: string, work: () => Promise<T>): Promise<T> {
    await this.turn(project);
    try {
      return await work();
    } finally {
      this.running--;
      this.next();
    }
  }

  private turn(project: string): Promise<void> {
    if (this.running < this.slots && this.waiting.size === 0) {
      this.start(project);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let line = this.waiting.get(project);
      if (!line) this.waiting.set(project, (line = []));
      line.push(resolve);
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let project = '';
      let oldest = Infinity;
      for (const candidate of this.waiting.keys()) {
        const served = this.lastServed.get(candidate) ?? -1;
        if (served < oldest) [project, oldest] = [candidate, served];
      }
      const line = this.waiting.get(project)!;
      const begin = line.shift()!;
      if (line.length === 0) this.waiting.delete(project);
      this.start(project);
      begin();
    }
  }

  private start(project: string): void {
    this.running++;
    this.lastServed.set(project, this.served++);
    // Forget projects idle for a long while (the map would otherwise grow with every project seen).
    if (this.lastServed.size > 10_000) {
      for (const [candidate, served] of this.lastServed)
        if (served < this.served - 10_000 && !this.waiting.has(candidate)) this.lastServed.delete(candidate);
    }
  }
}

const SCHEDULED = new Set(['query', 'exec', 'command', 'insert']);

/**
 * The same client, with each statement taking its turn in `scheduler` as `participant`: in the
 * all-in-one process the worker's inserts and upkeep take turns with the API's projects instead of
 * holding the one embedded engine back to back.
 */
export function scheduledClient<C extends object>(client: C, scheduler: FairScheduler, participant: string): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !SCHEDULED.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => scheduler.run(participant, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}
