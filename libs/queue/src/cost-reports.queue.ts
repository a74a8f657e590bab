import type { JobsOptions } from 'bullmq';

/** Scheduled cost reports (issue 5): the API upserts a job scheduler per schedule; the worker consumes. */
export const COST_REPORTS_QUEUE = 'cost-reports';

export const CostReportJobName = {
  /** A schedule fired (or the worker came back): produce every window that is due, once. */
  Fire: 'fire',
  /** POST one stored report to its schedule's webhook. */
  Deliver: 'deliver',
} as const;

export interface FireJob {
  scheduleId: string;
  /** The schedule's project, for the worker's turns between projects; absent in jobs queued before it was added. */
  projectId?: string;
}

export interface DeliverJob {
  reportId: string;
  /** The report's project, for the worker's turns between projects; absent in jobs queued before it was added. */
  projectId?: string;
}

export type CostReportJob = FireJob | DeliverJob;

export const schedulerId = (scheduleId: string) => `schedule-${scheduleId}`;
/** One delivery job per report: BullMQ ignores an add whose job id exists (ids may not contain ":"). */
export const deliveryJobId = (reportId: string) => `deliver-${reportId}`;

/** Webhook deliveries retry for about 8.5 minutes (1 s doubling, 10 tries) before the report is marked failed. */
export const DELIVERY_JOB_OPTIONS: JobsOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 1_000 },
};

export const FIRE_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 1_000 },
};
