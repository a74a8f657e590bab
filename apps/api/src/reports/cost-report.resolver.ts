import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CostReportService, type ReportRow, type ScheduleRow } from '@spanforge/cost-reports';
import { badInput } from '@spanforge/errors';
import { ApiKeyScope, type ProjectScope } from '@spanforge/tenancy';
import { CurrentProject, RequireScope } from '../auth/access.decorators';
import type { CostDimension } from '../query/query.model';
import { CostReportSchedule, CostReportScheduleInput, CostReportSummary, CreatedCostReportSchedule } from './cost-report.model';

function toSchedule(row: ScheduleRow): CostReportSchedule {
  return {
    id: row.id,
    cron: row.cron,
    timezone: row.timezone,
    window: row.window_iso,
    groupBy: row.group_by as CostDimension[],
    webhookUrl: row.webhook_url,
    includeFeedback: row.include_feedback,
    createdAt: row.created_at,
  };
}

function toReport(row: ReportRow): CostReportSummary {
  return {
    id: row.id,
    scheduleId: row.schedule_id,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    createdAt: row.created_at,
    deliveryStatus: row.delivery_status,
    deliveryAttempts: row.delivery_attempts,
    lastDeliveryError: row.last_delivery_error,
    deliveredAt: row.delivered_at,
    csvPath: `/v1/reports/${row.id}.csv`,
    htmlPath: `/v1/reports/${row.id}.html`,
    report: { ...(row.report as object), id: row.id },
  };
}

/** Scheduled cost reports, per project: schedules are configuration (MANAGE; they hold the webhook), reports are data (READ). */
@Resolver()
export class CostReportResolver {
  constructor(private readonly reports: CostReportService) {}

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => CreatedCostReportSchedule, {
    description: 'Creates a cost report schedule (at most 20 per project, none firing more often than every 15 minutes).',
  })
  async createCostReportSchedule(
    @CurrentProject() scope: ProjectScope,
    @Args('input', { description: 'The schedule.' }) input: CostReportScheduleInput,
  ): Promise<CreatedCostReportSchedule> {
    const { schedule, signingSecret } = await this.reports.createSchedule(scope, input);
    return { schedule: toSchedule(schedule), signingSecret };
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => CostReportSchedule, { description: "Replaces a schedule's whole definition; its signing secret stays." })
  async updateCostReportSchedule(
    @CurrentProject() scope: ProjectScope,
    @Args('id', { type: () => ID, description: 'The schedule id.' }) id: string,
    @Args('input', { description: 'The new definition.' }) input: CostReportScheduleInput,
  ): Promise<CostReportSchedule> {
    return toSchedule(await this.reports.updateSchedule(scope, id, input));
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => Boolean, { description: 'Stops a schedule; its reports stay. Answers true; an unknown id is NOT_FOUND.' })
  async deleteCostReportSchedule(
    @CurrentProject() scope: ProjectScope,
    @Args('id', { type: () => ID, description: 'The schedule id.' }) id: string,
  ): Promise<boolean> {
    return this.reports.deleteSchedule(scope, id);
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Mutation(() => CostReportSummary, { description: 'Produces the report of the window ending now and delivers it to the webhook.' })
  async runCostReportNow(
    @CurrentProject() scope: ProjectScope,
    @Args('scheduleId', { type: () => ID, description: 'The schedule whose report to produce.' }) scheduleId: string,
  ): Promise<CostReportSummary> {
    return toReport(await this.reports.runNow(scope, scheduleId));
  }

  @RequireScope(ApiKeyScope.MANAGE)
  @Query(() => [CostReportSchedule], { description: "The project's cost report schedules (scope MANAGE: they hold webhook URLs)." })
  async costReportSchedules(@CurrentProject() scope: ProjectScope): Promise<CostReportSchedule[]> {
    return (await this.reports.schedules(scope)).map(toSchedule);
  }

  @RequireScope(ApiKeyScope.READ)
  @Query(() => [CostReportSummary], { description: "The project's reports, newest window first." })
  async costReports(
    @CurrentProject() scope: ProjectScope,
    @Args('first', { type: () => Int, nullable: true, description: 'How many, 1 to 200; absent: 20.' }) first?: number,
  ): Promise<CostReportSummary[]> {
    const limit = first ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badInput('first must be between 1 and 200');
    return (await this.reports.reports(scope, limit)).map(toReport);
  }

  @RequireScope(ApiKeyScope.READ)
  @Query(() => CostReportSummary, { nullable: true, description: 'One report of the project; null when it has no such report.' })
  async costReport(
    @CurrentProject() scope: ProjectScope,
    @Args('id', { type: () => ID, description: 'The report id.' }) id: string,
  ): Promise<CostReportSummary | null> {
    const row = await this.reports.report(scope, id);
    return row ? toReport(row) : null;
  }
}
