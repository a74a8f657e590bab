import { Field, ID, InputType, Int, ObjectType } from '@nestjs/graphql';
import { JSONScalar } from '../query/json.scalar';
import { CostDimension } from '../query/query.model';

@InputType({ description: 'When a cost report is produced, what it covers and where it is sent.' })
export class CostReportScheduleInput {
  @Field({ description: 'Cron expression of exactly five fields (minute hour day month weekday), evaluated in `timezone`.' }) cron!: string;
  @Field({ description: 'IANA timezone, e.g. Europe/Lisbon (no UTC offsets).' }) timezone!: string;
  @Field({
    description: 'ISO-8601 duration the report covers, ending at each firing: PT1H, P1D, P7D; from PT1M to P93D, no months or years.',
  })
  window!: string;
  @Field(() => [CostDimension], { description: "What the report's breakdown groups by, as in costBreakdown." }) groupBy!: CostDimension[];
  @Field({ description: 'http(s) URL receiving each report as signed JSON; private addresses are refused unless ALLOW_PRIVATE_WEBHOOKS.' })
  webhookUrl!: string;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Whether the top sessions carry their feedback scores; absent: false.',
  })
  includeFeedback?: boolean;
}

@ObjectType({ description: 'A schedule of cost reports: at each cron firing the report of the window before is produced and delivered.' })
export class CostReportSchedule {
  @Field(() => ID, { description: 'The schedule id.' }) id!: string;
  @Field({ description: 'Cron expression (minute hour day month weekday), evaluated in `timezone`.' }) cron!: string;
  @Field({ description: 'The IANA timezone the cron runs in.' }) timezone!: string;
  @Field({ description: 'ISO-8601 duration each report covers, ending at the firing.' }) window!: string;
  @Field(() => [CostDimension], { description: "What the report's breakdown groups by." }) groupBy!: CostDimension[];
  @Field({ description: 'Where each report is POSTed as signed JSON.' }) webhookUrl!: string;
  @Field({ description: 'Whether the top sessions carry their feedback scores.' }) includeFeedback!: boolean;
  @Field({ description: 'When the schedule was created.' }) createdAt!: Date;
}

@ObjectType({ description: 'A new schedule with the secret that signs its deliveries.' })
export class CreatedCostReportSchedule {
  @Field(() => CostReportSchedule, { description: 'The schedule as stored.' }) schedule!: CostReportSchedule;
  @Field({ description: 'Key of the Spanforge-Signature HMAC on every delivery; shown once.' }) signingSecret!: string;
}

@ObjectType({ description: 'A produced cost report and how its delivery went.' })
export class CostReportSummary {
  @Field(() => ID, { description: 'The report id.' }) id!: string;
  @Field(() => ID, {
    nullable: true,
    description: 'The schedule that produced it (kept after the schedule is deleted); null when the report has none.',
  })
  scheduleId!: string | null;
  @Field({ description: 'Start of the window the report covers (inclusive).' }) windowStart!: Date;
  @Field({ description: 'End of the window the report covers (exclusive): the firing time, or when runCostReportNow ran.' })
  windowEnd!: Date;
  @Field({ description: 'When the report was produced.' }) createdAt!: Date;
  @Field({
    description: 'pending (delivery under way or being retried), delivered, failed (every attempt failed) or not_requested.',
  })
  deliveryStatus!: string;
  @Field(() => Int, { description: 'Delivery attempts made so far.' }) deliveryAttempts!: number;
  @Field(() => String, {
    nullable: true,
    description: "Why the last attempt failed (the webhook's status or the error); null when it succeeded or none was made.",
  })
  lastDeliveryError!: string | null;
  @Field(() => Date, { nullable: true, description: 'When the webhook accepted it; null while not delivered.' })
  deliveredAt!: Date | null;
  @Field({ description: 'GET with the project key: the report as CSV.' }) csvPath!: string;
  @Field({ description: 'GET with the project key: the report as an HTML page with a chart.' }) htmlPath!: string;
  @Field(() => JSONScalar, { description: 'The report itself: totals, change, breakdown, top sessions and traces.' }) report!: unknown;
}
