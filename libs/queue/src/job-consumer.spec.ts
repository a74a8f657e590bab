import type { Job, Worker } from 'bullmq';
import { JobConsumer, RENEWAL_RETRY_DELAYS_MS } from './job-consumer';

/**
 * The consumer's lock renewal, against a stand-in for BullMQ's Worker: one job is taken and kept
 * running, and the test decides how each renewal call ends. Time is jest's (fake timers), so the
 * renewal interval and the retry delays are stepped through exactly.
 */
class StandInWorker {
  /** Each extendJobLocks call, when it was made (fake ms). */
  readonly renewals: number[] = [];
  /** Renewal calls running now, and the most at once. */
  private inFlight = 0;
  maxInFlight = 0;
  /** How the next calls end, in order: 'fail', 'hang' (until released), or succeed once used up. */
  outcomes: Array<'fail' | 'hang'> = [];
  private readonly hung: Array<() => void> = [];
  private taken = false;

  async getNextJob(): Promise<Job | undefined> {
    if (!this.taken) {
      this.taken = true;
      return { id: 'job-1', moveToCompleted: async () => undefined, moveToFailed: async () => undefined } as unknown as Job;
    }
    // The queue has nothing more: a blocking fetch waits (BullMQ's drainDelay), then answers empty.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    return undefined;
  }

  async extendJobLocks(): Promise<void> {
    this.renewals.push(Date.now());
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const outcome = this.outcomes.shift();
      if (outcome === 'fail') throw new Error('deadlock detected');
      if (outcome === 'hang') await new Promise<void>((resolve) => this.hung.push(resolve));
    } finally {
      this.inFlight--;
    }
  }

  releaseHung(): void {
    for (const resolve of this.hung.splice(0)) resolve();
  }

  async startStalledCheckTimer(): Promise<void> {}

  async close(): Promise<void> {}
}

describe('JobConsumer lock renewal', () => {
  const LOCK_MS = 2_000;
  let worker: StandInWorker;
  let consumer: JobConsumer<unknown>;
  let finishJob: () => void;
  const errors: string[] = [];

  beforeEach(async () => {
    jest.useFakeTimers();
    errors.length = 0;
    worker = new StandInWorker();
    const running = new Promise<void>((resolve) => (finishJob = resolve));
    consumer = new JobConsumer(worker as unknown as Worker, () => running, {
      concurrency: 1,
      lockDuration: LOCK_MS,
      stalledInterval: 30_000,
      maxStalledCount: 1,
      onError: (message) => errors.push(message),
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(consumer.inFlight).toBe(1);
  });

  afterEach(async () => {
    finishJob();
    worker.releaseHung();
    const closed = consumer.close();
    await jest.advanceTimersByTimeAsync(10_000);
    await closed;
    jest.useRealTimers();
  });

  it('tries a failed renewal again after a short delay instead of leaving the lock to the next one', async () => {
    const start = Date.now();
    worker.outcomes = ['fail'];
    await jest.advanceTimersByTimeAsync(LOCK_MS / 2 + RENEWAL_RETRY_DELAYS_MS[0]!);
    // The renewal at half the lock failed; it was made again 100 ms later, and it held.
    expect(worker.renewals.map((at) => at - start)).toEqual([LOCK_MS / 2, LOCK_MS / 2 + RENEWAL_RETRY_DELAYS_MS[0]!]);
    expect(errors).toEqual([]);
  });

  it('reports a renewal only when every attempt failed', async () => {
    worker.outcomes = ['fail', 'fail', 'fail'];
    await jest.advanceTimersByTimeAsync(LOCK_MS / 2 + RENEWAL_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));
    expect(worker.renewals).toHaveLength(1 + RENEWAL_RETRY_DELAYS_MS.length);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('failed 3 times');
  });

  it('starts no renewal while the one before is still under way', async () => {
    worker.outcomes = ['hang'];
    // Two more intervals pass while the first call hangs.
    await jest.advanceTimersByTimeAsync(LOCK_MS * 1.5);
    expect(worker.renewals).toHaveLength(1);
    worker.releaseHung();
    await jest.advanceTimersByTimeAsync(LOCK_MS / 2);
    expect(worker.renewals).toHaveLength(2);
    expect(worker.maxInFlight).toBe(1);
  });
});
