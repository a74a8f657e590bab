export interface BatchingOptions {
  /** A batch is sealed once this many items (or this much `weight`) wait. */
  maxItems: number;
  /** With a write slot free, a batch is written at the latest this long after its first item arrived. */
  maxDelayMs: number;
  /** Batches written at the same time (default 1). More overlap a slow write with the next one. */
  maxConcurrentFlushes?: number;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Batch<T> {
  items: T[];
  waiters: Waiter[];
  /** Whether anything but lazy items waits in it (a lazy-only batch waits for its timer). */
  due: boolean;
}

/**
 * Gathers items from many callers into batches and hands each batch to one flush function; each
 * caller's promise settles when the batch holding its items has been written (or has failed), so
 * a queue job is acknowledged only after its rows are stored.
 *
 * Group commit: at most `maxConcurrentFlushes` batches are written at once, and while every slot
 * is busy the open batch keeps filling (up to `maxItems`) instead of being cut by its timer. When
 * a write ends, what gathered meanwhile goes out at once as one batch. So under load batches grow
 * to `maxItems` by themselves (a write has a fixed cost: fewer, bigger writes), and when idle an
 * item waits at most `maxDelayMs`.
 */
export class BatchingQueue<T> {
  private open: Batch<T> = { items: [], waiters: [], due: false };
  private weight = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Full batches waiting for a write slot, oldest first. */
  private readonly sealed: Array<Batch<T>> = [];
  private closed = false;

  constructor(
    private readonly flushBatch: (items: T[]) => Promise<void>,
    private readonly options: BatchingOptions,
    /** How much one item counts towards maxItems (e.g. the rows of a chunk); 1 by default. */
    private readonly weigh: (item: T) => number = () => 1,
  ) {}

  /**
   * Adds items to the open batch; resolves when their batch is written. Lazy items do not make
   * the batch due when a write ends: they ride along with the next items, or go out when their
   * timer fires.
   */
  add(items: T[], options: { lazy?: boolean } = {}): Promise<void> {
    if (this.closed) return Promise.reject(new Error('batching queue is closed'));
    if (items.length === 0) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => this.open.waiters.push({ resolve, reject }));
    if (!options.lazy) this.open.due = true;
    for (const item of items) {
      this.open.items.push(item);
      this.weight += this.weigh(item);
    }
    if (this.weight >= this.options.maxItems) {
      this.seal();
      this.startWrites();
    } else if (this.slotFree()) {
      this.timer ??= setTimeout(() => this.flushOpen(), this.options.maxDelayMs);
    }
    return settled;
  }

  /** Writes whatever waits, then resolves when every batch so far is done. */
  async flush(): Promise<void> {
    this.seal();
    this.startWrites();
    while (this.inFlight.size > 0 || this.sealed.length > 0) {
      await Promise.all(this.inFlight);
      this.startWrites();
    }
  }

  async close(): Promise<void> {
    // Items added while flushing (a write may add more) are written too before the queue refuses any.
    do await this.flush();
    while (this.open.items.length > 0);
    this.closed = true;
  }

  private slotFree(): boolean {
    return this.inFlight.size < (this.options.maxConcurrentFlushes ?? 1);
  }

  private flushOpen(): void {
    this.seal();
    this.startWrites();
  }

  /** Closes the open batch (if it holds anything) and queues it for writing. */
  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.open.items.length === 0) return;
    this.sealed.push(this.open);
    this.open = { items: [], waiters: [], due: false };
    this.weight = 0;
  }

  /** Starts sealed batches, oldest first, while a write slot is free. */
  private startWrites(): void {
    while (this.sealed.length > 0 && this.slotFree()) {
      const batch = this.sealed.shift()!;
      const write = (async () => {
        try {
          await this.flushBatch(batch.items);
          for (const w of batch.waiters) w.resolve();
        } catch (error) {
          for (const w of batch.waiters) w.reject(error);
        }
      })();
      this.inFlight.add(write);
      void write.then(() => {
        this.inFlight.delete(write);
        // What gathered during the write goes out now: it has waited at least that long.
        if (this.sealed.length === 0 && this.open.due) this.seal();
        this.startWrites();
        if (this.open.items.length > 0 && this.slotFree()) this.timer ??= setTimeout(() => this.flushOpen(), this.options.maxDelayMs);
      });
    }
  }
}
