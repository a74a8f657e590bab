import { BatchingQueue } from './batching.queue';

describe('BatchingQueue', () => {
  it('writes a batch when it is full and settles each caller after its batch', async () => {
    const batches: number[][] = [];
    const queue = new BatchingQueue<number>(
      async (items) => {
        batches.push(items);
      },
      { maxItems: 4, maxDelayMs: 60_000 },
    );
    const a = queue.add([1, 2]);
    const b = queue.add([3, 4, 5]);
    await Promise.all([a, b]);
    expect(batches).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('writes a partial batch after the delay', async () => {
    const batches: number[][] = [];
    const queue = new BatchingQueue<number>(
      async (items) => {
        batches.push(items);
      },
      { maxItems: 1000, maxDelayMs: 20 },
    );
    const started = Date.now();
    await queue.add([7]);
    expect(batches).toEqual([[7]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('fails every caller of a failed batch and nobody else', async () => {
    let calls = 0;
    const queue = new BatchingQueue<number>(
      async () => {
        calls++;
        if (calls === 1) throw new Error('clickhouse down');
      },
      { maxItems: 2, maxDelayMs: 60_000 },
    );
    const first = queue.add([1, 2]);
    const second = queue.add([3, 4]);
    await expect(first).rejects.toThrow('clickhouse down');
    await expect(second).resolves.toBeUndefined();
  });

  it('runs one flush at a time and keeps order', async () => {
    const log: string[] = [];
    const queue = new BatchingQueue<number>(
      async (items) => {
        log.push(`start ${items.join(',')}`);
        await new Promise((r) => setTimeout(r, 10));
        log.push(`end ${items.join(',')}`);
      },
      { maxItems: 1, maxDelayMs: 60_000 },
    );
    await Promise.all([queue.add([1]), queue.add([2])]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('flushes what waits on close and refuses more', async () => {
    const batches: number[][] = [];
    const queue = new BatchingQueue<number>(
      async (items) => {
        batches.push(items);
      },
      { maxItems: 100, maxDelayMs: 60_000 },
    );
    const pending = queue.add([1]);
    await queue.close();
    await pending;
    expect(batches).toEqual([[1]]);
    await expect(queue.add([2])).rejects.toThrow('closed');
  });
});

/** A queue whose first write lasts until release() is called; every batch is recorded. */
function firstWriteHeld<T>(options: { maxItems: number; maxDelayMs: number }) {
  const batches: T[][] = [];
  let release: () => void = () => undefined;
  const firstWrite = new Promise<void>((r) => (release = r));
  const queue = new BatchingQueue<T>(async (items) => {
    batches.push(items);
    if (batches.length === 1) await firstWrite;
  }, options);
  return { queue, batches, release: () => release() };
}

describe('BatchingQueue group commit', () => {
  it('gathers what arrives during a write into one batch, written as soon as the write ends', async () => {
    const { queue, batches, release } = firstWriteHeld<number>({ maxItems: 100, maxDelayMs: 5 });
    const first = queue.add([1]);
    await new Promise((r) => setTimeout(r, 20));
    expect(batches).toEqual([[1]]);
    // Arrive one by one, each long after maxDelayMs, while the first write still runs.
    const later: Array<Promise<void>> = [];
    for (const n of [2, 3, 4]) {
      later.push(queue.add([n]));
      await new Promise((r) => setTimeout(r, 15));
    }
    expect(batches).toEqual([[1]]);
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('lets lazy items wait for their timer or for the next items, not for a write to end', async () => {
    const { queue, batches, release } = firstWriteHeld<string>({ maxItems: 100, maxDelayMs: 40 });
    const first = queue.add(['a']);
    await new Promise((r) => setTimeout(r, 50));
    const lazy = queue.add(['backfill'], { lazy: true });
    release();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([['a']]);
    const next = queue.add(['b']);
    await Promise.all([lazy, next]);
    expect(batches).toEqual([['a'], ['backfill', 'b']]);
    // Alone, a lazy item still goes out after maxDelayMs.
    const started = Date.now();
    await queue.add(['late'], { lazy: true });
    expect(batches.at(-1)).toEqual(['late']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('still seals a full batch while a write runs, so batches never exceed maxItems', async () => {
    const { queue, batches, release } = firstWriteHeld<number>({ maxItems: 2, maxDelayMs: 60_000 });
    const writes = [queue.add([1, 2]), queue.add([3]), queue.add([4]), queue.add([5])];
    release();
    await queue.flush();
    await Promise.all(writes);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });
});

describe('BatchingQueue with concurrent flushes', () => {
  it('writes up to maxConcurrentFlushes batches at once, and never more', async () => {
    let running = 0;
    let peak = 0;
    const queue = new BatchingQueue<number>(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 15));
        running--;
      },
      { maxItems: 1, maxDelayMs: 60_000, maxConcurrentFlushes: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((n) => queue.add([n])));
    expect(peak).toBe(2);
    await queue.close();
  });
});
