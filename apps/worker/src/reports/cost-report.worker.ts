import { UnrecoverableError, type Job } from 'bullmq';
import { WebhookDeliveryError, type CostReportService } from '@spanforge/cost-reports';
import {
  COST_REPORTS_QUEUE,
  CostReportJobName,
  FIRE_JOB_OPTIONS,
  type DeliverJob,
  type FireJob,
  type QueueBackend,
} from '@spanforge/queue';

/** What the processor needs of a logger. */
export interface CostReportWorkerLog {
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

/**
 * One cost-report job. A name it does not know fails the job for good (as the ingest worker does):
 * completing it would hide a producer this worker does not understand. Every failed attempt is
 * logged with its reason, except refused webhook deliveries, which the service has logged already.
 */
export function costReportProcessor(service: Pick<CostReportService, 'fire' | 'deliver'>, log: CostReportWorkerLog) {
  return async (job: Job<FireJob | DeliverJob>): Promise<number | void> => {
    const attempts = job.opts.attempts ?? 1;
    try {
      if (job.name === CostReportJobName.Fire) return await service.fire((job.data as FireJob).scheduleId);
      if (job.name === CostReportJobName.Deliver)
        return await service.deliver((job.data as DeliverJob).reportId, job.attemptsMade + 1 >= attempts);
      throw new UnrecoverableError(`unknown cost-report job name "${job.name}"`);
    } catch (error) {
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
 * Consumes the cost-report queue. At start it re-registers every schedule's job scheduler and runs
 * one catch-up firing per schedule, which produces the windows missed while no worker ran.
 */
export async function startCostReportWorker(service: CostReportService, queues: QueueBackend, log: CostReportWorkerLog): Promise<void> {
  queues.worker<FireJob | DeliverJob>(COST_REPORTS_QUEUE, costReportProcessor(service, log), {
    concurrency: 4,
  });
  const queue = queues.queue<FireJob>(COST_REPORTS_QUEUE);
  for (const schedule of await service.activeSchedules()) {
    await service.register(schedule);
    await queue.add(
      CostReportJobName.Fire,
      { scheduleId: schedule.id },
      { ...FIRE_JOB_OPTIONS, jobId: `catch-up-${schedule.id}-${Date.now()}` },
    );
  }
}
