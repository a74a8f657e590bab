export interface BatchingOptions {
  /** Flush as soon as this many items wait. */
  maxItems: number;
  /** Flush at the latest this long after the first item of a batch arrived. */
  maxDelayMs: number;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers items from many callers into batches and hands each batch to one flush function; each
 * caller's promise settles when the batch holding its items has been written (or has failed), so
 * a queue job is acknowledged only after its rows are stored. One flush at a time: while one is
 * in flight the next batch fills, which is the back-pressure.
 */
export class BatchingQueue<T> {
  private items: T[] = [];
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly flushBatch: (items: T[]) => Promise<void>,
    private readonly options: BatchingOptions,
  ) {}

  add(items: T[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('batching queue is closed'));
    if (items.length === 0) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    for (const item of items) this.items.push(item);
    if (this.items.length >= this.options.maxItems) this.flushNow();
    else this.timer ??= setTimeout(() => this.flushNow(), this.options.maxDelayMs);
    return settled;
  }

  get pending(): number {
    return this.items.length;
  }

  /** Writes whatever waits, then resolves when every batch so far is done. */
  async flush(): Promise<void> {
    this.flushNow();
    await this.inFlight;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0) return;
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    this.inFlight = this.inFlight.then(async () => {
      try {
        await this.flushBatch(items);
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters) w.reject(error);
      }
    });
  }
}
