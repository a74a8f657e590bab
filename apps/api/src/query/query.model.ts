import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { SafeIntScalar } from '../graphql/safe-int.scalar';
import { JSONScalar } from './json.scalar';

export enum SpanType {
  RUN = 'RUN',
  AGENT = 'AGENT',
  LLM = 'LLM',
  TOOL = 'TOOL',
  RETRIEVAL = 'RETRIEVAL',
  EMBEDDING = 'EMBEDDING',
  RERANK = 'RERANK',
  GUARDRAIL = 'GUARDRAIL',
  EVALUATION = 'EVALUATION',
  CHAIN = 'CHAIN',
  HTTP = 'HTTP',
  DB = 'DB',
  OTHER = 'OTHER',
}
export enum StatusCode {
  UNSET = 'UNSET',
  OK = 'OK',
  ERROR = 'ERROR',
}
export enum CostDimension {
  MODEL = 'MODEL',
  PROVIDER = 'PROVIDER',
  SPAN_TYPE = 'SPAN_TYPE',
  SERVICE = 'SERVICE',
  DAY = 'DAY',
  SESSION = 'SESSION',
}
registerEnumType(SpanType, { name: 'SpanType' });
registerEnumType(StatusCode, { name: 'StatusCode' });
export enum SpanKind {
  UNSPECIFIED = 'UNSPECIFIED',
  INTERNAL = 'INTERNAL',
  SERVER = 'SERVER',
  CLIENT = 'CLIENT',
  PRODUCER = 'PRODUCER',
  CONSUMER = 'CONSUMER',
}
registerEnumType(CostDimension, { name: 'CostDimension' });
registerEnumType(SpanKind, { name: 'SpanKind', description: 'The OpenTelemetry span kind.' });
export enum CostSource {
  EXPLICIT = 'EXPLICIT',
  PRICE_TABLE = 'PRICE_TABLE',
  OVERRIDE = 'OVERRIDE',
  UNPRICED = 'UNPRICED',
}
registerEnumType(CostSource, {
  name: 'CostSource',
  description:
    "Where a span's cost comes from: a cost the span stated, the price table, the project's price override, or nowhere (a model without a price: its cost reads 0 but is unknown).",
});

@ObjectType()
export class Span {
  @Field() spanId!: string;
  @Field(() => String, { nullable: true }) parentSpanId!: string | null;
  @Field() name!: string;
  @Field(() => SpanType) type!: SpanType;
  @Field(() => Date) startTime!: string;
  @Field(() => Date) endTime!: string;
  @Field(() => Float) durationMs!: number;
  @Field(() => StatusCode) statusCode!: StatusCode;
  @Field(() => String, {
    nullable: true,
    description: "The status description the span ended with (an error's message), when it gave one.",
  })
  statusMessage!: string | null;
  @Field(() => SpanKind) kind!: SpanKind;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => SafeIntScalar, {
    description: "This span's own input tokens: 0 for a span that only repeats its children's usage (see statedInputTokens).",
  })
  inputTokens!: number;
  @Field(() => SafeIntScalar, { description: "This span's own output tokens: 0 for a span that only repeats its children's usage." })
  outputTokens!: number;
  @Field(() => Float, {
    description: "This span's own cost: the spans of a trace add up to its costUsd (a wrapper's repeated totals count 0).",
  })
  costUsd!: number;
  @Field(() => CostSource, { nullable: true, description: 'Where costUsd comes from; null for a span with no usage of its own to price.' })
  costSource!: CostSource | null;
  @Field(() => SafeIntScalar, {
    nullable: true,
    description:
      "For a span that only repeats its children's usage (an agent's or an SDK wrapper's totals, e.g. Vercel ai.generateText): the input tokens it stated. Not its own, not added to the trace; null for other spans.",
  })
  statedInputTokens!: number | null;
  @Field(() => SafeIntScalar, { nullable: true, description: 'The output tokens such a span stated (see statedInputTokens).' })
  statedOutputTokens!: number | null;
  @Field(() => Float, { nullable: true, description: 'The cost of the usage such a span stated (see statedInputTokens).' })
  statedCostUsd!: number | null;
  @Field(() => JSONScalar, { nullable: true, description: 'Span attributes (message contents excluded: see spanDetail).' })
  attributes!: Record<string, unknown> | null;
  @Field({
    description: 'Opaque: `trace { spans(after: cursor) }` continues with the spans after this one, in (start time, span id) order.',
  })
  cursor!: string;
}

@ObjectType()
export class CriticalPathStep {
  @Field() spanId!: string;
  @Field() name!: string;
  @Field(() => Float) durationMs!: number;
  @Field(() => Float, { description: 'Time of this span on the path not spent in its children on the path.' }) selfMs!: number;
}

@ObjectType()
export class FeedbackScore {
  @Field() name!: string;
  @Field(() => JSONScalar) value!: unknown;
  @Field(() => String, { nullable: true }) comment!: string | null;
}

@ObjectType()
export class Finding {
  @Field() kind!: string;
  @Field() message!: string;
  @Field(() => [String]) spanIds!: string[];
}

@ObjectType()
export class Trace {
  @Field() traceId!: string;
  @Field(() => String, { nullable: true }) sessionId!: string | null;
  @Field(() => String, { nullable: true }) userId!: string | null;
  @Field(() => String, { nullable: true }) rootName!: string | null;
  @Field(() => Date) startTime!: string;
  @Field(() => Float) durationMs!: number;
  @Field(() => Int) iterations!: number;
  @Field(() => Float) costUsd!: number;
  @Field(() => SafeIntScalar) inputTokens!: number;
  @Field(() => SafeIntScalar) outputTokens!: number;
  @Field(() => Int) errorCount!: number;
  @Field(() => Int) llmCalls!: number;
  @Field(() => [String]) models!: string[];
  @Field(() => [String]) toolsUsed!: string[];
  @Field(() => [FeedbackScore]) feedback!: FeedbackScore[];
}

@ObjectType()
export class PageInfo {
  @Field(() => String, { nullable: true }) endCursor!: string | null;
  @Field() hasNextPage!: boolean;
}

@ObjectType()
export class TraceConnection {
  @Field(() => [Trace]) nodes!: Trace[];
  @Field(() => SafeIntScalar) totalCount!: number;
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

@ObjectType()
export class IterationLatency {
  @Field(() => Int) iterations!: number;
  @Field(() => SafeIntScalar) traceCount!: number;
  @Field(() => Float) p50Ms!: number;
  @Field(() => Float) p95Ms!: number;
  @Field(() => Float) p99Ms!: number;
  @Field(() => Float) avgCostUsd!: number;
}

@ObjectType()
export class SessionFeedback {
  @Field() name!: string;
  @Field(() => Int) count!: number;
  @Field(() => Float, { nullable: true }) avg!: number | null;
}

@ObjectType()
export class Session {
  @Field() sessionId!: string;
  @Field(() => SafeIntScalar) traceCount!: number;
  @Field(() => Float) costUsd!: number;
  @Field(() => SafeIntScalar) inputTokens!: number;
  @Field(() => SafeIntScalar) outputTokens!: number;
  @Field(() => Date) firstSeen!: string;
  @Field(() => Date) lastSeen!: string;
  @Field(() => [SessionFeedback]) feedback!: SessionFeedback[];
}

@ObjectType()
export class SessionConnection {
  @Field(() => [Session]) nodes!: Session[];
  @Field(() => SafeIntScalar) totalCount!: number;
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

@ObjectType()
export class CostRow {
  @Field(() => [String]) keys!: string[];
  @Field(() => Float) costUsd!: number;
  @Field(() => SafeIntScalar) inputTokens!: number;
  @Field(() => SafeIntScalar) outputTokens!: number;
  @Field(() => SafeIntScalar, {
    description:
      "Spans in this group that own their usage. A wrapper span repeating its children's totals (an agent span carrying summed tokens) is left out: its tokens would count twice.",
  })
  spanCount!: number;
}

@ObjectType({ description: 'Something that happened during a span at one instant: an exception, a retry, a streamed first token.' })
export class SpanEvent {
  @Field() name!: string;
  @Field(() => Date) time!: string;
  @Field(() => JSONScalar, { description: 'Its attributes, such as exception.type, exception.message and exception.stacktrace.' })
  attributes!: Record<string, unknown>;
}

@ObjectType()
export class SpanDetail {
  @Field() spanId!: string;
  @Field(() => JSONScalar) attributes!: Record<string, unknown>;
  @Field(() => JSONScalar) resourceAttributes!: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'Message contents sent to the model (JSON text), when captured.' }) input!:
    string | null;
  @Field(() => String, { nullable: true, description: 'Message contents the model returned (JSON text), when captured.' }) output!:
    string | null;
  @Field(() => [SpanEvent], { description: 'The span events, in time order.' }) events!: SpanEvent[];
}

@InputType()
export class AttributeFilter {
  @Field() key!: string;
  @Field({ description: 'Compared with the stored value as text; numbers and booleans as JSON (42, true).' }) value!: string;
}

@InputType('FeedbackScoreFilter')
export class FeedbackScoreFilterInput {
  @Field() name!: string;
  @Field(() => Float, { nullable: true, description: 'Lowest mean score (NUMERIC; BOOLEAN counts true as 1).' }) min?: number;
  @Field(() => Float, { nullable: true }) max?: number;
}

@InputType('TraceFilter')
export class TraceFilterInput {
  @Field(() => FeedbackScoreFilterInput, {
    nullable: true,
    description: 'Only traces with this score; with min/max, whose mean score is in range.',
  })
  feedback?: FeedbackScoreFilterInput;
  @Field(() => Date, { nullable: true }) from?: Date;
  @Field(() => Date, { nullable: true }) to?: Date;
  @Field(() => String, { nullable: true }) sessionId?: string;
  @Field(() => String, { nullable: true }) userId?: string;
  @Field(() => String, { nullable: true }) rootName?: string;
  @Field(() => Boolean, { nullable: true, description: 'true: only traces with an ERROR span; false: only traces without.' })
  hasError?: boolean;
  @Field(() => Int, { nullable: true }) minIterations?: number;
  @Field(() => Int, { nullable: true }) maxIterations?: number;
  @Field(() => String, { nullable: true }) model?: string;
  @Field(() => [AttributeFilter], { nullable: true }) attributes?: AttributeFilter[];
}

@InputType('TimeRange')
export class TimeRangeInput {
  @Field(() => Date, { nullable: true }) from?: Date;
  @Field(() => Date, { nullable: true }) to?: Date;
}

@InputType('SessionFilter')
export class SessionFilterInput {
  @Field(() => FeedbackScoreFilterInput, {
    nullable: true,
    description: 'Only sessions with this score; with min/max, whose mean over the session is in range.',
  })
  feedback?: FeedbackScoreFilterInput;
  @Field(() => Date, { nullable: true }) from?: Date;
  @Field(() => Date, { nullable: true }) to?: Date;
  @Field(() => String, { nullable: true }) userId?: string;
}

export { ID };

@ObjectType()
export class SpanTypeStats {
  @Field(() => SpanType) type!: SpanType;
  @Field(() => SafeIntScalar) spanCount!: number;
  @Field(() => Float) errorRate!: number;
  @Field(() => Float) p50Ms!: number;
  @Field(() => Float) p95Ms!: number;
  @Field(() => Float) p99Ms!: number;
}

@ObjectType()
export class ModelStats {
  @Field() model!: string;
  @Field(() => String, { nullable: true }) provider!: string | null;
  @Field(() => SafeIntScalar) calls!: number;
  @Field(() => SafeIntScalar) inputTokens!: number;
  @Field(() => SafeIntScalar) outputTokens!: number;
  @Field(() => Float) costUsd!: number;
  @Field(() => SafeIntScalar, {
    description:
      'Calls with usage but no price for their model: costUsd leaves them out, so a non-zero count means the cost is understated.',
  })
  unpricedCalls!: number;
  @Field(() => Float, { nullable: true }) ttftP50Ms!: number | null;
  @Field(() => Float, { nullable: true }) ttftP95Ms!: number | null;
  @Field(() => Float, { nullable: true, description: 'Output tokens per second of generation time (after the first token).' })
  outputTokensPerSecond!: number | null;
}

@ObjectType()
export class RejectedCount {
  @Field() reason!: string;
  @Field(() => Int) spans!: number;
}

@ObjectType()
export class IngestMinute {
  @Field(() => Date) minute!: string;
  @Field(() => Int) received!: number;
  @Field(() => Int) accepted!: number;
  @Field(() => Int) rejected!: number;
  @Field(() => Int) rateLimited!: number;
  @Field(() => Int, { description: 'Spans of exports refused whole (undecodable, queue full or unavailable).' }) refused!: number;
  @Field(() => [RejectedCount]) rejectedByReason!: RejectedCount[];
  @Field(() => Int, {
    description:
      'Spans accepted, then kept in the dead letters instead of stored (the store refused them, or their export ran out of retries); an operator can replay them.',
  })
  deadLettered!: number;
  @Field(() => [RejectedCount], { description: 'deadLettered by reason: store_refused, retries_exhausted, stalled, poison_export.' })
  deadLetteredByReason!: RejectedCount[];
}
