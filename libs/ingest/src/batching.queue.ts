export interface BatchingOptions {
  /** Flush as soon as this many items (or this much `weight`) wait. */
  maxItems: number;
  /** Flush at the latest this long after the first item of a batch arrived. */
  maxDelayMs: number;
  /** Batches written at the same time (default 1). More overlap a slow write with the next one. */
  maxConcurrentFlushes?: number;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers items from many callers into batches and hands each batch to one flush function; each
 * caller's promise settles when the batch holding its items has been written (or has failed), so
 * a queue job is acknowledged only after its rows are stored. At most `maxConcurrentFlushes`
 * batches are written at once: while they are in flight the next batch fills, which is the
 * back-pressure.
 */
export class BatchingQueue<T> {
  private items: T[] = [];
  private weight = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly ready: Array<{ items: T[]; waiters: Waiter[] }> = [];
  private closed = false;

  constructor(
    private readonly flushBatch: (items: T[]) => Promise<void>,
    private readonly options: BatchingOptions,
    /** How much one item counts towards maxItems (e.g. the rows of a chunk); 1 by default. */
    private readonly weigh: (item: T) => number = () => 1,
  ) {}

  add(items: T[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('batching queue is closed'));
    if (items.length === 0) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    for (const item of items) {
      this.items.push(item);
      this.weight += this.weigh(item);
    }
    if (this.weight >= this.options.maxItems) this.flushNow();
    else this.timer ??= setTimeout(() => this.flushNow(), this.options.maxDelayMs);
    return settled;
  }

  get pending(): number {
    return this.weight;
  }

  /** Writes whatever waits, then resolves when every batch so far is done. */
  async flush(): Promise<void> {
    this.flushNow();
    while (this.inFlight.size > 0 || this.ready.length > 0) await Promise.all(this.inFlight);
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0) return;
    this.ready.push({ items: this.items, waiters: this.waiters });
    this.items = [];
    this.weight = 0;
    this.waiters = [];
    this.startWrites();
  }

  /** Starts ready batches, oldest first, while fewer than maxConcurrentFlushes are running. */
  private startWrites(): void {
    while (this.ready.length > 0 && this.inFlight.size < (this.options.maxConcurrentFlushes ?? 1)) {
      const { items, waiters } = this.ready.shift()!;
      const write = (async () => {
        try {
          await this.flushBatch(items);
          for (const w of waiters) w.resolve();
        } catch (error) {
          for (const w of waiters) w.reject(error);
        }
      })();
      this.inFlight.add(write);
      void write.then(() => {
        this.inFlight.delete(write);
        this.startWrites();
      });
    }
  }
}
