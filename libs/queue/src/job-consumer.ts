import { randomUUID } from 'node:crypto';
import { UnrecoverableError, type Job, type Worker } from 'bullmq';

export type JobProcessor<T> = (job: Job<T>) => Promise<unknown>;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A lock renewal that fails (PostgreSQL aborting it in a deadlock with another queue transaction, a
 * dropped connection) is tried again after these delays, well within the lock's life; only when
 * every attempt fails is it reported, and the locks then wait for the next renewal.
 */
export const RENEWAL_RETRY_DELAYS_MS = [100, 500];

export interface JobConsumerOptions {
  /** Jobs in flight at once. */
  concurrency: number;
  /** A job's lock; renewed every half of it while the job runs. A crashed consumer's jobs return to the queue once it lapses. */
  lockDuration: number;
  /** How often stalled jobs (lock lapsed) are looked for and returned to the queue. */
  stalledInterval: number;
  /** Stalls a job may take before it fails for good. */
  maxStalledCount: number;
  /** Told of what the consumer cannot do itself (a lost lock, a queue it cannot reach); the consumer carries on. */
  onError?: (message: string, error: unknown) => void;
  /**
   * Asked before each fetch: while it says no, the consumer takes no job (it looks again every
   * second), so jobs it could not finish wait in the queue for another consumer instead of using
   * up their attempts here. Jobs already taken run on.
   */
  mayTake?: () => boolean;
}

/**
 * Runs a queue's jobs, up to `concurrency` at a time, fetching the next job whenever a slot is
 * free — blocking on the queue when it is empty, and waking as soon as a job is added.
 *
 * Why not BullMQ's own processing loop: once a fetch finds the queue empty, that loop waits for a
 * running job to finish before it looks at the queue again. Ingest jobs stay in flight until their
 * batch is written and kept up (hundreds of milliseconds), so whenever the worker caught up with a
 * burst it stopped taking jobs until then (measured: no job taken for 1.4 s while the gateway queued
 * 230 exports; `npm run bench:ingest`, BENCHMARKS.md). This uses BullMQ's documented manual-fetching
 * API on a Worker without a processor: `getNextJob`, `moveToCompleted`/`moveToFailed` (retries,
 * back-off and UnrecoverableError as usual), lock renewal, and the stalled-job checker.
 */
export class JobConsumer<T> {
  /** Running jobs by their fetch token (a job id can come back while an earlier run of it lingers). */
  private readonly active = new Map<string, Job<T>>();
  private running = true;
  /** Waiting for a job to end: the fetch loop (for a free slot) and close (for none running). */
  private waiters: Array<() => void> = [];
  private readonly lockTimer: NodeJS.Timeout;
  /** How often the running jobs' locks are renewed: every half of a lock. */
  private readonly renewEveryMs: number;
  /** A renewal under way: the next one waits for it (two at once lock the same rows, in any order). */
  private renewing = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly worker: Worker<T>,
    private readonly processor: JobProcessor<T>,
    private readonly options: JobConsumerOptions,
  ) {
    void worker.startStalledCheckTimer().catch((error: unknown) => this.options.onError?.('the stalled-job check stopped', error));
    this.renewEveryMs = Math.max(100, options.lockDuration / 2);
    this.lockTimer = setInterval(() => this.renewLocks(), this.renewEveryMs);
    this.lockTimer.unref();
    this.loop = this.fetchLoop();
  }

  /** Jobs running now. */
  get inFlight(): number {
    return this.active.size;
  }

  /**
   * Takes no more jobs, lets the running ones finish, then closes the worker's connections. A fetch
   * still blocked on the queue returns within the worker's drainDelay; a job it brings is run first.
   */
  async close(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    while (this.active.size > 0) await this.jobEnded();
    clearInterval(this.lockTimer);
    await this.worker.close();
  }

  private async fetchLoop(): Promise<void> {
    let quickEmpties = 0;
    while (this.running) {
      if (this.active.size >= this.options.concurrency) {
        await this.jobEnded();
        continue;
      }
      if (this.options.mayTake && !this.options.mayTake()) {
        await delay(1_000);
        continue;
      }
      const token = randomUUID();
      const asked = performance.now();
      let job: Job<T> | undefined;
      try {
        job = await this.worker.getNextJob(token, { block: true });
      } catch (error) {
        // The connection is down: the next attempt waits a moment (BullMQ reconnects by itself).
        if (this.running) {
          this.options.onError?.('fetching the next job failed; trying again in 1 s', error);
          await delay(1_000);
        }
        continue;
      }
      // A job taken while closing is still run: it is ours until its lock lapses.
      if (job) {
        this.active.set(token, job);
        void this.run(job, token);
      }
      // The first empty answer comes at once (the queue just ran dry; the next fetch blocks). Empty
      // answers at once in a row mean the worker is paused or rate-limited: do not spin then.
      quickEmpties = !job && performance.now() - asked < 5 ? quickEmpties + 1 : 0;
      if (quickEmpties >= 2) await delay(50);
    }
  }

  private async run(job: Job<T>, token: string): Promise<void> {
    try {
      // Returned to the queue by the stalled-job check more than maxStalledCount times (its runs
      // keep killing or stalling their process): failed for good instead of run again, as BullMQ's
      // own processing loop does, so a job that crashes its worker cannot do it forever.
      if (job.deferredFailure) {
        await job.moveToFailed(new UnrecoverableError(job.deferredFailure), token, false);
        return;
      }
      let result: unknown;
      try {
        result = await this.processor(job);
      } catch (error) {
        await job.moveToFailed(error instanceof Error ? error : new Error(String(error)), token, false);
        return;
      }
      await job.moveToCompleted(result, token, false);
    } catch (error) {
      // The stalled-job check returns it to the queue (at-least-once): its rows may be written twice, which changes no figure.
      this.options.onError?.(
        `job ${job.id} ran, but finishing it in the queue failed (lock lost or connection down); it will run again`,
        error,
      );
    } finally {
      this.active.delete(token);
      this.wake();
    }
  }

  private jobEnded(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private renewLocks(): void {
    if (this.active.size === 0 || this.renewing) return;
    this.renewing = true;
    void this.renewWithRetries().finally(() => (this.renewing = false));
  }

  /**
   * One call for all running jobs, tried again after RENEWAL_RETRY_DELAYS_MS when it fails. A lock
   * that cannot be renewed lapses; the job then returns to the queue (at-least-once), and a job
   * returned more than maxStalledCount times fails for good, so a renewal lost to a passing deadlock
   * is worth a second try.
   */
  private async renewWithRetries(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const running = [...this.active];
      if (running.length === 0) return;
      try {
        await this.worker.extendJobLocks(
          running.map(([, job]) => job.id!),
          running.map(([token]) => token),
          this.options.lockDuration,
        );
        return;
      } catch (error) {
        if (attempt >= RENEWAL_RETRY_DELAYS_MS.length) {
          this.options.onError?.(
            `renewing the locks of ${running.length} running job(s) failed ${attempt + 1} times; they are tried again in ${this.renewEveryMs} ms, and a lock that lapses meanwhile returns its job to the queue`,
            error,
          );
          return;
        }
        await delay(RENEWAL_RETRY_DELAYS_MS[attempt]!);
      }
    }
  }
}
