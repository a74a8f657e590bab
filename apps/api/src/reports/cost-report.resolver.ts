import { Args, Context, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { ReportRow, ScheduleRow } from '@spanforge/cost-reports';
import { badInput } from '@spanforge/errors';
import { requireProject, type RequestContext } from '../graphql/request-context';
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

/** Issue 5: scheduled cost reports, per project. */
@Resolver()
export class CostReportResolver {
  @Mutation(() => CreatedCostReportSchedule)
  async createCostReportSchedule(@Args('input') input: CostReportScheduleInput, @Context() context: RequestContext): Promise<CreatedCostReportSchedule> {
    const scope = await requireProject(context);
    const { schedule, signingSecret } = await context.infra.costReports.createSchedule(scope, input);
    return { schedule: toSchedule(schedule), signingSecret };
  }

  @Mutation(() => CostReportSchedule)
  async updateCostReportSchedule(@Args('id', { type: () => ID }) id: string, @Args('input') input: CostReportScheduleInput, @Context() context: RequestContext): Promise<CostReportSchedule> {
    const scope = await requireProject(context);
    return toSchedule(await context.infra.costReports.updateSchedule(scope, id, input));
  }

  @Mutation(() => Boolean)
  async deleteCostReportSchedule(@Args('id', { type: () => ID }) id: string, @Context() context: RequestContext): Promise<boolean> {
    const scope = await requireProject(context);
    return context.infra.costReports.deleteSchedule(scope, id);
  }

  @Mutation(() => CostReportSummary, { description: 'Produces the report of the window ending now and delivers it to the webhook.' })
  async runCostReportNow(@Args('scheduleId', { type: () => ID }) scheduleId: string, @Context() context: RequestContext): Promise<CostReportSummary> {
    const scope = await requireProject(context);
    return toReport(await context.infra.costReports.runNow(scope, scheduleId));
  }

  @Query(() => [CostReportSchedule])
  async costReportSchedules(@Context() context: RequestContext): Promise<CostReportSchedule[]> {
    const scope = await requireProject(context);
    return (await context.infra.costReports.schedules(scope)).map(toSchedule);
  }

  @Query(() => [CostReportSummary], { description: 'The project\'s reports, newest window first.' })
  async costReports(@Context() context: RequestContext, @Args('first', { type: () => Int, nullable: true }) first?: number): Promise<CostReportSummary[]> {
    const scope = await requireProject(context);
    const limit = first ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badInput('first must be between 1 and 200');
    return (await context.infra.costReports.reports(scope, limit)).map(toReport);
  }

  @Query(() => CostReportSummary, { nullable: true })
  async costReport(@Args('id', { type: () => ID }) id: string, @Context() context: RequestContext): Promise<CostReportSummary | null> {
    const scope = await requireProject(context);
    const row = await context.infra.costReports.report(scope, id);
    return row ? toReport(row) : null;
  }
}
