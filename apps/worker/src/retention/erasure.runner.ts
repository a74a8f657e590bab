import type { ErasureJob } from '@spanforge/ingest';

/** How often an idle worker looks for an erasure to run. */
export const ERASURE_POLL_MS = 2_000;

export interface ErasureRunnerDeps {
  claim: () => Promise<ErasureJob | undefined>;
  erase: (job: ErasureJob) => Promise<void>;
  /**
   * The status the job is left in: PENDING when spans of its traces were stored during the run (it
   * runs again); undefined when it was claimed again meanwhile (this run outlasted the claim): the
   * new holder completes it.
   */
  complete: (job: ErasureJob) => Promise<'COMPLETED' | 'PENDING' | undefined>;
  /** False when the job was claimed again meanwhile: the new holder runs it. */
  release: (job: ErasureJob, error: string) => Promise<boolean>;
  log: { info(message: string): void; warn(message: string): void; error(message: string, error?: unknown): void };
  pollMs?: number;
}

/**
 * Runs the erasure jobs (eraseData) in every worker: claims a due job no worker runs (projects take
 * turns: ErasureRepository.claim), erases its traces from ClickHouse (docs/data-policy.md,
 * "Erasure"), and records it COMPLETED; a failed attempt is given back with its reason and tried
 * again after a back-off, while other jobs go on. Jobs run one at a time per worker.
 */
export class ErasureRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly deps: ErasureRunnerDeps) {}

  start(): void {
    const tick = () => {
      this.running = this.runAll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.deps.pollMs ?? ERASURE_POLL_MS).unref();
      });
    };
    this.timer = setTimeout(tick, this.deps.pollMs ?? ERASURE_POLL_MS).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Runs jobs until none is waiting (or the runner stops). */
  async runAll(): Promise<void> {
    while (!this.stopped) {
      let job: ErasureJob | undefined;
      try {
        job = await this.deps.claim();
      } catch (error) {
        this.deps.log.error('erasure: looking for a job failed; trying again shortly', error);
        return;
      }
      if (!job) return;
      const started = Date.now();
      try {
        await this.deps.erase(job);
        const what = `erasure ${job.id} (project ${job.projectId}, ${job.traceCount} trace(s))`;
        const status = await this.deps.complete(job);
        const took = Date.now() - started;
        if (status === 'COMPLETED') this.deps.log.info(`${what} completed in ${took} ms`);
        else if (status === 'PENDING')
          this.deps.log.info(`${what} ran in ${took} ms; spans of its traces were stored meanwhile, so it runs again`);
        else this.deps.log.warn(`${what} ran for ${took} ms and was claimed again meanwhile: its new holder completes it`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.deps.log.error(`erasure ${job.id} (project ${job.projectId}) failed; it is tried again`, error);
        try {
          if (!(await this.deps.release(job, reason)))
            this.deps.log.warn(`erasure ${job.id}: not given back, it was claimed again meanwhile and its new holder runs it`);
        } catch (releaseError) {
          this.deps.log.error(`erasure ${job.id}: giving it back failed; it is claimed again once its claim is stale`, releaseError);
        }
        return;
      }
    }
  }
}
