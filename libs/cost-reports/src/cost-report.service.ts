import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { ClickHouseClient, FairScheduler } from '@spanforge/clickhouse';
import type { QueryLimits } from '@spanforge/config';
import { badInput, notFound } from '@spanforge/errors';
import { COST_DIMENSIONS, type CostDimension, type KeptSince } from '@spanforge/query';
import {
  CostReportJobName,
  DELIVERY_JOB_OPTIONS,
  deliveryJobId,
  schedulerId,
  type CostReportJob,
  type DeliverJob,
  type FireJob,
} from '@spanforge/queue';
import {
  canonicalTimezone,
  dueWindows,
  parseWindow,
  validateCron,
  validateCronFrequency,
  validateTimezone,
  type CostReport,
} from '@spanforge/reports';
import { buildCostReport } from './cost-report.builder';
import type { CostReportRepository, ReportRow, ScheduleRow } from './schedule.repository';
import { checkWebhookUrl, deliverWebhook } from './webhook.delivery';

export interface ScheduleInput {
  cron: string;
  timezone: string;
  window: string;
  groupBy: string[];
  webhookUrl: string;
  includeFeedback?: boolean | null;
}

export interface Scope {
  tenantId: string;
  projectId: string;
}

export interface CostReportDeps {
  repository: CostReportRepository;
  clickhouse: ClickHouseClient;
  queue: Queue<FireJob | DeliverJob>;
  projectName: (projectId: string) => Promise<string>;
  allowPrivateWebhooks: boolean;
  /** Where failed deliveries are reported (each attempt, with the reason). */
  warn?: (message: string) => void;
  /** The operator's API query limits, for the reports' reads (the defaults when absent). */
  queryLimits?: QueryLimits;
  /** The process's statement turns between projects (FairScheduler). */
  querySlots?: FairScheduler;
  /** Each project's retention: a report reads only what the project keeps. */
  keptSince?: KeptSince;
}

/** A delivery attempt the receiver did not take; already recorded on the report and logged with its reason. */
export class WebhookDeliveryError extends Error {
  override readonly name = 'WebhookDeliveryError';
}

/** Schedules one project may have: with MIN_SCHEDULE_INTERVAL_MS, it bounds a project's share of the report workers. */
export const MAX_SCHEDULES_PER_PROJECT = 20;

/**
 * Scheduled cost reports. A schedule is a BullMQ job scheduler (its cron in its timezone) whose
 * jobs produce every due window's report exactly once (UNIQUE (schedule, window end) in
 * PostgreSQL) and queue one delivery per report; deliveries retry with backoff and are recorded.
 */
export class CostReportService {
  constructor(private readonly deps: CostReportDeps) {}

  async createSchedule(scope: Scope, input: ScheduleInput): Promise<{ schedule: ScheduleRow; signingSecret: string }> {
    const checked = await this.check(input);
    if ((await this.deps.repository.schedules(scope.projectId)).length >= MAX_SCHEDULES_PER_PROJECT) {
      throw badInput(`this project has ${MAX_SCHEDULES_PER_PROJECT} cost report schedules, the most it may have; delete one first`);
    }
    const signingSecret = `whsec_${randomBytes(32).toString('base64url')}`;
    const schedule = await this.deps.repository.createSchedule({
      tenant_id: scope.tenantId,
      project_id: scope.projectId,
      ...checked,
      signing_secret: signingSecret,
    });
    await this.register(schedule);
    return { schedule, signingSecret };
  }

  async updateSchedule(scope: Scope, id: string, input: ScheduleInput): Promise<ScheduleRow> {
    const checked = await this.check(input);
    const schedule = isUuid(id) ? await this.deps.repository.updateSchedule(scope.projectId, id, checked) : undefined;
    if (!schedule) throw notFound(`no cost report schedule ${id} in this project`);
    await this.register(schedule);
    return schedule;
  }

  async deleteSchedule(scope: Scope, id: string): Promise<boolean> {
    const deleted = isUuid(id) && (await this.deps.repository.deleteSchedule(scope.projectId, id));
    if (!deleted) throw notFound(`no cost report schedule ${id} in this project`);
    await this.deps.queue.removeJobScheduler(schedulerId(id));
    return true;
  }

  activeSchedules(): Promise<ScheduleRow[]> {
    return this.deps.repository.activeSchedules();
  }

  schedules(scope: Scope): Promise<ScheduleRow[]> {
    return this.deps.repository.schedules(scope.projectId);
  }

  reports(scope: Scope, limit: number): Promise<ReportRow[]> {
    return this.deps.repository.reports(scope.projectId, limit);
  }

  report(scope: Scope, id: string): Promise<ReportRow | undefined> {
    return this.deps.repository.report(scope.projectId, id);
  }

  /** Empties every stored report past its project's retention (its row stays, so its window is not made again). */
  expireReports(): Promise<number> {
    return this.deps.repository.expireReports();
  }

  /** The report of [now − window, now), stored and delivered like a scheduled one. */
  async runNow(scope: Scope, scheduleId: string, now = new Date()): Promise<ReportRow> {
    const schedule = isUuid(scheduleId) ? await this.deps.repository.schedule(scheduleId) : undefined;
    if (!schedule || schedule.project_id !== scope.projectId) throw notFound(`no cost report schedule ${scheduleId} in this project`);
    const row = await this.produce(schedule, { start: new Date(now.getTime() - Number(schedule.window_ms)), end: now });
    await this.enqueueDelivery(row.id, row.project_id);
    return row;
  }

  /**
   * The job of a firing (or of the worker's catch-up at start): every window due since the last
   * stored one, oldest first, each stored once; then a delivery for every report still pending,
   * so a crash between storing and queueing loses no delivery.
   */
  async fire(scheduleId: string, now = new Date()): Promise<number> {
    const schedule = await this.deps.repository.schedule(scheduleId);
    if (!schedule) return 0;
    const windows = dueWindows(
      { cron: schedule.cron, timezone: schedule.timezone, windowMs: Number(schedule.window_ms), createdAt: schedule.created_at },
      await this.deps.repository.lastWindowEnd(scheduleId),
      now,
    );
    for (const window of windows) await this.produce(schedule, window);
    for (const id of await this.deps.repository.pendingDeliveries(scheduleId)) await this.enqueueDelivery(id, schedule.project_id);
    return windows.length;
  }

  /**
   * The project a report job works for (the worker's turns between projects): named in the job, or
   * looked up for jobs queued before jobs named it. Undefined when the schedule or report is gone,
   * in which case the job has nothing to do.
   */
  async projectOf(name: string, job: CostReportJob): Promise<string | undefined> {
    if (job.projectId) return job.projectId;
    if (name === CostReportJobName.Fire) return this.deps.repository.projectOfSchedule((job as FireJob).scheduleId);
    if (name === CostReportJobName.Deliver) return this.deps.repository.projectOfReport((job as DeliverJob).reportId);
    return undefined;
  }

  /** One delivery attempt; throws while it should be retried, records the outcome either way. */
  async deliver(reportId: string, finalAttempt: boolean): Promise<void> {
    const report = await this.deps.repository.reportById(reportId);
    if (!report || report.delivery_status !== 'pending' || !report.schedule_id) return;
    const schedule = await this.deps.repository.schedule(report.schedule_id);
    if (!schedule) return;
    const result = await deliverWebhook(
      schedule.webhook_url,
      schedule.signing_secret,
      report.id,
      JSON.stringify(report.report),
      this.deps.allowPrivateWebhooks,
    );
    await this.deps.repository.recordDelivery(report.id, { delivered: result.ok, error: result.error, final: finalAttempt });
    if (!result.ok) {
      this.deps.warn?.(
        `cost report ${report.id} (schedule ${report.schedule_id}): delivery failed, ${finalAttempt ? 'last attempt, giving up' : 'will retry'}: ${result.error}`,
      );
      throw new WebhookDeliveryError(result.error ?? 'webhook delivery failed');
    }
  }

  /** Makes (or updates) the BullMQ job scheduler that fires this schedule. */
  async register(schedule: ScheduleRow): Promise<void> {
    await this.deps.queue.upsertJobScheduler(
      schedulerId(schedule.id),
      { pattern: schedule.cron, tz: schedule.timezone },
      { name: CostReportJobName.Fire, data: { scheduleId: schedule.id, projectId: schedule.project_id } },
    );
  }

  private async produce(schedule: ScheduleRow, window: { start: Date; end: Date }): Promise<ReportRow> {
    const report: CostReport = await buildCostReport(
      this.deps.clickhouse,
      {
        tenantId: schedule.tenant_id,
        projectId: schedule.project_id,
        projectName: await this.deps.projectName(schedule.project_id),
        scheduleId: schedule.id,
        window,
        timezone: schedule.timezone,
        groupBy: schedule.group_by as CostDimension[],
        includeFeedback: schedule.include_feedback,
      },
      { limits: this.deps.queryLimits, scheduler: this.deps.querySlots, keptSince: this.deps.keptSince },
    );
    const { row } = await this.deps.repository.insertReport({
      tenantId: schedule.tenant_id,
      projectId: schedule.project_id,
      scheduleId: schedule.id,
      windowStart: window.start,
      windowEnd: window.end,
      report,
      deliver: true,
    });
    return row;
  }

  private async enqueueDelivery(reportId: string, projectId: string): Promise<void> {
    await this.deps.queue.add(
      CostReportJobName.Deliver,
      { reportId, projectId },
      { ...DELIVERY_JOB_OPTIONS, jobId: deliveryJobId(reportId) },
    );
  }

  private async check(input: ScheduleInput) {
    // Every problem at once, so a schedule is fixed in one round trip.
    const cronProblem = validateCron(input.cron);
    const problems = [cronProblem ?? validateCronFrequency(input.cron), validateTimezone(input.timezone)];
    let windowMs = 0;
    try {
      windowMs = parseWindow(input.window);
    } catch (error) {
      problems.push((error as Error).message);
    }
    if (
      !Array.isArray(input.groupBy) ||
      input.groupBy.length === 0 ||
      input.groupBy.some((d) => !(COST_DIMENSIONS as readonly string[]).includes(d))
    ) {
      problems.push(`groupBy needs 1 to 6 of ${COST_DIMENSIONS.join(', ')}`);
    }
    problems.push(await checkWebhookUrl(input.webhookUrl, this.deps.allowPrivateWebhooks));
    const found = problems.filter((p): p is string => !!p);
    if (found.length) throw badInput(found.join('; '));
    return {
      cron: input.cron.trim(),
      timezone: canonicalTimezone(input.timezone),
      window_iso: input.window,
      window_ms: String(windowMs),
      group_by: [...new Set(input.groupBy)],
      webhook_url: new URL(input.webhookUrl).href,
      include_feedback: input.includeFeedback ?? false,
    };
  }
}

function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}
