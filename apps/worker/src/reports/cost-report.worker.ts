import { DelayedError, ErrorCode, UnrecoverableError, type Job } from 'bullmq';
import type { Registry } from 'prom-client';
import { WebhookDeliveryError, type CostReportService } from '@spanforge/cost-reports';
import {
  COST_REPORTS_QUEUE,
  CostReportJobName,
  FIRE_JOB_OPTIONS,
  type CostReportJob,
  type DeliverJob,
  type FireJob,
  type QueueBackend,
} from '@spanforge/queue';
import { ReportTurns, type ReportTurnsOptions } from './cost-report.turns';

/** Report jobs in progress at once per worker process, all projects together. */
export const REPORT_CONCURRENCY = 4;

/** What the processor needs of a logger. */
export interface CostReportWorkerLog {
  debug(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

type ReportJobService = Pick<CostReportService, 'fire' | 'deliver' | 'projectOf'>;

/**
 * One cost-report job, in a turn of its project (ReportTurns; without turns, as it comes). A name
 * it does not know fails the job for good (as the ingest worker does): completing it would hide a
 * producer this worker does not understand. Every failed attempt is logged with its reason, except
 * refused webhook deliveries, which the service has logged already. A deferral is no failure.
 */
export function costReportProcessor(service: ReportJobService, log: CostReportWorkerLog, turns?: ReportTurns) {
  return async (job: Job<CostReportJob>, token?: string): Promise<number | void> => {
    const attempts = job.opts.attempts ?? 1;
    try {
      if (job.name !== CostReportJobName.Fire && job.name !== CostReportJobName.Deliver) {
        throw new UnrecoverableError(`unknown cost-report job name "${job.name}"`);
      }
      const work = (): Promise<number | void> =>
        job.name === CostReportJobName.Fire
          ? service.fire((job.data as FireJob).scheduleId)
          : service.deliver((job.data as DeliverJob).reportId, job.attemptsMade + 1 >= attempts);
      if (!turns) return await work();
      return await turns.run(job, token, await service.projectOf(job.name, job.data), work);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      if (!(error instanceof WebhookDeliveryError)) {
        const final = error instanceof UnrecoverableError || job.attemptsMade + 1 >= attempts;
        log.warn(
          `cost-report job ${job.id} (${job.name}) failed on attempt ${job.attemptsMade + 1} of ${attempts}${final ? ', for good' : ', will retry'}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      throw error;
    }
  };
}

/**
 * Consumes the cost-report queue, in turns between projects (ReportTurns). At start it
 * re-registers every schedule's job scheduler (which also gives older schedulers' jobs the project
 * id) and runs one catch-up firing per schedule, which produces the windows missed while no worker
 * ran.
 */
export async function startCostReportWorker(
  service: CostReportService,
  queues: QueueBackend,
  log: CostReportWorkerLog,
  metrics: Registry,
  options: Pick<ReportTurnsOptions, 'perProject' | 'deferMs'> = {},
): Promise<void> {
  const turns = new ReportTurns({ ...options, log, metrics });
  queues.worker<CostReportJob>(COST_REPORTS_QUEUE, costReportProcessor(service, log, turns), { concurrency: REPORT_CONCURRENCY });
  const queue = queues.queue<FireJob>(COST_REPORTS_QUEUE);
  for (const schedule of await service.activeSchedules()) {
    try {
      await service.register(schedule);
    } catch (error) {
      // Another worker starting at the same moment registered the same schedule first: the firing
      // this registration would queue is already queued, so the schedule stands as it was.
      if ((error as { code?: unknown }).code !== ErrorCode.SchedulerJobIdCollision) throw error;
      log.warn(`cost report schedule ${schedule.id}: another process registered it at the same moment; its next firing is queued already`);
    }
    await queue.add(
      CostReportJobName.Fire,
      { scheduleId: schedule.id, projectId: schedule.project_id },
      { ...FIRE_JOB_OPTIONS, jobId: `catch-up-${schedule.id}-${Date.now()}` },
    );
  }
}
