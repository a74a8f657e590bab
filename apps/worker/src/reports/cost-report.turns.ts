import { DelayedError, type Job } from 'bullmq';
import { Counter, type Registry } from 'prom-client';
import { ProjectSlots } from './cost-report.slots';

/**
 * Report jobs of one project in progress at once in one worker process. With the worker's 4 slots,
 * one project leaves at least 3 free for the others, and a fifth busy project waits for at most one
 * running job. One project's demand still fits its share: at most 20 schedules, none firing more
 * often than every 15 minutes, is at most 20 firings and 20 deliveries (a delivery attempt ≤ 10 s)
 * per 15 minutes.
 */
export const REPORT_JOBS_PER_PROJECT = 1;
/**
 * How long a deferred job stays in the delayed set unless woken. It is woken as soon as its
 * project's slot frees in this process; the delay is the backstop for a wake-up that never comes
 * (this process died holding the slot, or the promotion failed), and sets how often deferred jobs
 * look again while a long job (a catch-up firing of many windows) holds the slot. Longer than one
 * delivery attempt (10 s), so a slot held by a delivery is normally given back before it lapses.
 */
export const REPORT_DEFER_MS = 15_000;

export interface ReportTurnsOptions {
  perProject?: number;
  deferMs?: number;
  log: { debug(message: string): void };
  metrics: Registry;
}

/** The job as ReportTurns uses it (a BullMQ Job). */
export type TurnJob = Pick<Job, 'id' | 'name' | 'moveToDelayed' | 'promote'>;

/**
 * Fair turns between projects at this process's report slots (see ProjectSlots). A job past its
 * project's share is moved to the delayed set with the lock token it holds and `DelayedError` is
 * thrown, which BullMQ takes as "not finished, not failed": no attempt is used and no failure is
 * recorded, and the slot goes to the next job in the queue, which is another project's or is
 * deferred in turn.
 */
export class ReportTurns {
  readonly slots: ProjectSlots<TurnJob>;
  private readonly deferMs: number;
  private readonly deferrals: Counter<'job' | 'reason'>;

  constructor(private readonly options: ReportTurnsOptions) {
    this.deferMs = options.deferMs ?? REPORT_DEFER_MS;
    // Notes outlive their delay by one more delay: a job that came back is still known by its place in the line.
    this.slots = new ProjectSlots(options.perProject ?? REPORT_JOBS_PER_PROJECT, this.deferMs);
    const name = 'spanforge_cost_report_jobs_deferred_total';
    this.deferrals =
      (options.metrics.getSingleMetric(name) as Counter<'job' | 'reason'> | undefined) ??
      new Counter({
        name,
        help: 'Cost-report jobs this worker put back for later because their project had its share of the report slots in use, by job name and reason',
        labelNames: ['job', 'reason'],
        registers: [options.metrics],
      });
  }

  /**
   * Runs `work` in one of the project's slots, or defers the job (throws DelayedError). Without a
   * project (its schedule or report is gone, so the job does nothing) or a lock token (not under a
   * BullMQ worker) the job runs outside the shares.
   */
  async run<R>(job: TurnJob, token: string | undefined, projectId: string | undefined, work: () => Promise<R>): Promise<R> {
    if (!projectId || !token || job.id === undefined) return work();
    if (!this.slots.take(projectId, job.id)) return this.defer(job, job.id, token, projectId);
    try {
      return await work();
    } finally {
      this.slots.release(projectId);
      void this.wakeNext(projectId);
    }
  }

  private async defer(job: TurnJob, jobId: string, token: string, projectId: string): Promise<never> {
    const until = Date.now() + this.deferMs;
    const reason = this.slots.defer(projectId, jobId, job, until);
    this.deferrals.inc({ job: job.name, reason });
    this.options.log.debug(
      `cost-report job ${jobId} (${job.name}) of project ${projectId} deferred (${reason}): the project has ${this.slots.perProject} job(s) in progress here; it runs when one ends, at the latest in ${this.deferMs} ms`,
    );
    await job.moveToDelayed(until, token);
    // The slot may have been given back while the job was being moved, before it could be woken.
    if (this.slots.hasFree(projectId)) void this.wakeNext(projectId);
    throw new DelayedError();
  }

  /** Promotes the project's longest-deferred job; one that already left the delayed set is skipped. */
  private async wakeNext(projectId: string): Promise<void> {
    for (let next = this.slots.nextToWake(projectId); next; next = this.slots.nextToWake(projectId)) {
      try {
        await next.promote();
        this.options.log.debug(`cost-report job ${next.id} (${next.name}) of project ${projectId} woken: a slot of its project is free`);
        return;
      } catch (error) {
        // Expected when its delay lapsed meanwhile or another process took it: it is no longer delayed.
        this.options.log.debug(
          `cost-report job ${next.id} of project ${projectId} not woken (${error instanceof Error ? error.message : String(error)})`,
        );
      }
    }
  }
}
