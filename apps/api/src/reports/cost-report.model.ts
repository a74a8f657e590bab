import { Field, ID, InputType, Int, ObjectType } from '@nestjs/graphql';
import { JSONScalar } from '../query/json.scalar';
import { CostDimension } from '../query/query.model';

@InputType()
export class CostReportScheduleInput {
  @Field({ description: 'Cron expression (minute hour day month weekday), evaluated in `timezone`.' }) cron!: string;
  @Field({ description: 'IANA timezone, e.g. Europe/Lisbon.' }) timezone!: string;
  @Field({ description: 'ISO-8601 duration the report covers, ending at each firing: PT1H, P1D, P7D.' }) window!: string;
  @Field(() => [CostDimension]) groupBy!: CostDimension[];
  @Field({ description: 'http(s) URL receiving each report as signed JSON; private addresses are refused unless ALLOW_PRIVATE_WEBHOOKS.' })
  webhookUrl!: string;
  @Field(() => Boolean, { nullable: true }) includeFeedback?: boolean;
}

@ObjectType()
export class CostReportSchedule {
  @Field(() => ID) id!: string;
  @Field() cron!: string;
  @Field() timezone!: string;
  @Field() window!: string;
  @Field(() => [CostDimension]) groupBy!: CostDimension[];
  @Field() webhookUrl!: string;
  @Field() includeFeedback!: boolean;
  @Field() createdAt!: Date;
}

@ObjectType()
export class CreatedCostReportSchedule {
  @Field(() => CostReportSchedule) schedule!: CostReportSchedule;
  @Field({ description: 'Key of the Spanforge-Signature HMAC on every delivery; shown once.' }) signingSecret!: string;
}

@ObjectType()
export class CostReportSummary {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) scheduleId!: string | null;
  @Field() windowStart!: Date;
  @Field() windowEnd!: Date;
  @Field() createdAt!: Date;
  @Field() deliveryStatus!: string;
  @Field(() => Int) deliveryAttempts!: number;
  @Field(() => String, { nullable: true }) lastDeliveryError!: string | null;
  @Field(() => Date, { nullable: true }) deliveredAt!: Date | null;
  @Field({ description: 'GET with the project key: the report as CSV.' }) csvPath!: string;
  @Field({ description: 'GET with the project key: the report as an HTML page with a chart.' }) htmlPath!: string;
  @Field(() => JSONScalar, { description: 'The report itself: totals, change, breakdown, top sessions and traces.' }) report!: unknown;
}
