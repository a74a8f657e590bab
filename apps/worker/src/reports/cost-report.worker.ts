import type { Job } from 'bullmq';
import { COST_REPORTS_QUEUE, CostReportJobName, FIRE_JOB_OPTIONS, type DeliverJob, type FireJob } from '@spanforge/queue';
import type { Infrastructure } from '@spanforge/runtime';

/**
 * Consumes the cost-report queue. At start it re-registers every schedule's job scheduler and runs
 * one catch-up firing per schedule, which produces the windows missed while no worker ran.
 */
export async function startCostReportWorker(infra: Infrastructure): Promise<void> {
  const service = infra.costReports;
  infra.queues.worker<FireJob | DeliverJob>(
    COST_REPORTS_QUEUE,
    async (job: Job<FireJob | DeliverJob>) => {
      if (job.name === CostReportJobName.Fire) return service.fire((job.data as FireJob).scheduleId);
      if (job.name === CostReportJobName.Deliver) {
        const attempts = job.opts.attempts ?? 1;
        return service.deliver((job.data as DeliverJob).reportId, job.attemptsMade + 1 >= attempts);
      }
      return undefined;
    },
    { concurrency: 4 },
  );
  const queue = infra.queues.queue<FireJob>(COST_REPORTS_QUEUE);
  for (const schedule of await infra.costReports.activeSchedules()) {
    await service.register(schedule);
    await queue.add(CostReportJobName.Fire, { scheduleId: schedule.id }, { ...FIRE_JOB_OPTIONS, jobId: `catch-up-${schedule.id}-${Date.now()}` });
  }
}
