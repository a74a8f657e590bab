import { Field, Float, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { TraceFilterInput } from '../query/query.model';

export enum MetricsView {
  SPANS = 'SPANS',
  TRACES = 'TRACES',
  FEEDBACK = 'FEEDBACK',
}
registerEnumType(MetricsView, {
  name: 'MetricsView',
  description: 'What one row of a metrics query is.',
  valuesMap: {
    SPANS: { description: 'One row per span, at its start.' },
    TRACES: { description: 'One row per trace, at its start; duration is the trace’s wall time, cost and tokens the trace’s.' },
    FEEDBACK: { description: 'One row per feedback score, at the time it was received.' },
  },
});

export enum Measure {
  COUNT = 'COUNT',
  ERROR_COUNT = 'ERROR_COUNT',
  ERROR_RATE = 'ERROR_RATE',
  COST_USD = 'COST_USD',
  INPUT_TOKENS = 'INPUT_TOKENS',
  OUTPUT_TOKENS = 'OUTPUT_TOKENS',
  DURATION_AVG_MS = 'DURATION_AVG_MS',
  DURATION_P50_MS = 'DURATION_P50_MS',
  DURATION_P95_MS = 'DURATION_P95_MS',
  DURATION_P99_MS = 'DURATION_P99_MS',
  TTFT_P50_MS = 'TTFT_P50_MS',
  TTFT_P95_MS = 'TTFT_P95_MS',
  SCORE_AVG = 'SCORE_AVG',
}
registerEnumType(Measure, {
  name: 'Measure',
  description: 'A figure per bucket. Counts and sums are 0 in a bucket without data; averages, rates and percentiles are null there.',
  valuesMap: {
    COUNT: { description: 'Rows (spans, traces or scores).' },
    ERROR_COUNT: { description: 'Spans with status ERROR (SPANS); traces with an ERROR span (TRACES).' },
    ERROR_RATE: { description: 'ERROR_COUNT / COUNT, from 0 to 1.' },
    COST_USD: { description: 'Cost in USD. A wrapper span that only repeats its children’s usage adds nothing.' },
    INPUT_TOKENS: { description: 'Input tokens (cached included), counted as COST_USD is.' },
    OUTPUT_TOKENS: { description: 'Output tokens (reasoning included), counted as COST_USD is.' },
    DURATION_AVG_MS: { description: 'Mean duration in milliseconds.' },
    DURATION_P50_MS: { description: 'Median duration in milliseconds.' },
    DURATION_P95_MS: { description: '95th percentile of duration in milliseconds.' },
    DURATION_P99_MS: { description: '99th percentile of duration in milliseconds.' },
    TTFT_P50_MS: { description: 'Median time to first token of the spans that recorded one, in milliseconds (SPANS).' },
    TTFT_P95_MS: { description: '95th percentile of time to first token in milliseconds (SPANS).' },
    SCORE_AVG: { description: 'Mean of numeric and boolean (true = 1) scores (FEEDBACK).' },
  },
});

export enum MetricDimension {
  MODEL = 'MODEL',
  PROVIDER = 'PROVIDER',
  SPAN_TYPE = 'SPAN_TYPE',
  SERVICE = 'SERVICE',
  NAME = 'NAME',
  ROOT_NAME = 'ROOT_NAME',
  USER_ID = 'USER_ID',
  ITERATIONS = 'ITERATIONS',
  SCORE_NAME = 'SCORE_NAME',
}
registerEnumType(MetricDimension, {
  name: 'MetricDimension',
  description: 'What series are split by. Each view takes its own.',
  valuesMap: {
    MODEL: { description: 'The model that answered (SPANS).' },
    PROVIDER: { description: 'The model provider (SPANS).' },
    SPAN_TYPE: { description: 'The span type: LLM, TOOL, AGENT… (SPANS).' },
    SERVICE: { description: 'The service.name of the span’s resource (SPANS), or of the trace’s root (TRACES).' },
    NAME: { description: 'The span name (SPANS).' },
    ROOT_NAME: { description: 'The name of the trace’s root span (TRACES).' },
    USER_ID: { description: 'The trace’s user id (TRACES).' },
    ITERATIONS: { description: 'The agent iterations the trace stated, as text; -1 when none (TRACES).' },
    SCORE_NAME: { description: 'The score name (FEEDBACK).' },
  },
});

export enum Granularity {
  MINUTE = 'MINUTE',
  HOUR = 'HOUR',
  DAY = 'DAY',
  WEEK = 'WEEK',
  AUTO = 'AUTO',
}
registerEnumType(Granularity, {
  name: 'Granularity',
  description: 'Bucket size of a time series.',
  valuesMap: {
    MINUTE: { description: 'One minute.' },
    HOUR: { description: 'One hour of the time zone (a zone offset by 30 minutes starts its hours at :30 UTC).' },
    DAY: { description: 'From local midnight to the next: 23 or 25 hours on a daylight-saving change.' },
    WEEK: { description: 'From Monday local midnight to the next.' },
    AUTO: { description: 'The finest of the above that gives at most 100 buckets over the range.' },
  },
});

@InputType('MetricsQuery', { description: 'A time series query for dashboards.' })
export class MetricsQueryInput {
  @Field(() => MetricsView, { description: 'What one row is.' }) view!: MetricsView;
  @Field(() => [Measure], { description: 'The figures, in the order `values` gives them.' }) measures!: Measure[];
  @Field(() => [MetricDimension], { nullable: true, description: 'Split into series by these; absent: one series with keys [].' })
  groupBy?: MetricDimension[] | null;
  @Field(() => Granularity, { nullable: true, description: 'Bucket size; absent: no time axis (one point per series, time null).' })
  granularity?: Granularity | null;
  @Field(() => Date, { description: 'Start of the range (inclusive).' }) from!: Date;
  @Field(() => Date, { description: 'End of the range (exclusive).' }) to!: Date;
  @Field(() => String, { nullable: true, description: 'IANA time zone of DAY, WEEK and HOUR buckets; default UTC.' })
  timezone?: string | null;
  @Field(() => TraceFilterInput, {
    nullable: true,
    description: 'Only rows of the traces this filter matches; its own from/to, if given, narrow the traces it picks.',
  })
  filter?: TraceFilterInput | null;
  @Field(() => Int, { nullable: true, description: 'At most this many series, the largest by the first measure; default 20, at most 200.' })
  limit?: number | null;
}

@ObjectType({ description: 'One bucket of a series.' })
export class MetricsPoint {
  @Field(() => Date, { nullable: true, description: 'Start of the bucket; null without a time axis.' }) time!: Date | null;
  @Field(() => [Float], { nullable: 'items', description: 'One value per measure, in the order asked.' }) values!: Array<number | null>;
}

@ObjectType({ description: 'One series: a combination of dimension values.' })
export class MetricsSeries {
  @Field(() => [String], { description: 'The values of the groupBy dimensions, in their order.' }) keys!: string[];
  @Field(() => [MetricsPoint], { description: 'Every bucket from `from` to `to`, in time order.' }) points!: MetricsPoint[];
}

@ObjectType({ description: 'The answer of a metrics query.' })
export class MetricsResult {
  @Field(() => Granularity, { nullable: true, description: 'The bucket size used (what AUTO chose); null without a time axis.' })
  granularity!: Granularity | null;
  @Field(() => [MetricsSeries], { description: 'The series, largest first by the first measure.' }) series!: MetricsSeries[];
}
