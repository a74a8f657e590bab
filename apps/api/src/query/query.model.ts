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
registerEnumType(SpanType, {
  name: 'SpanType',
  description:
    'What a span does, read from the GenAI conventions it follows (OTel GenAI, OpenInference, OpenLLMetry, Vercel AI SDK, Langfuse), else from HTTP and database attributes.',
  valuesMap: {
    RUN: { description: 'The root of a GenAI trace: one run of the agent or app, also when only its children are GenAI spans.' },
    AGENT: { description: "An agent's invocation or one of its steps; AGENT spans under the root count as the trace's iterations." },
    LLM: { description: 'A call to a model (chat, completion, image or audio generation): the spans that carry tokens, cost and TTFT.' },
    TOOL: { description: 'A tool or function the agent called (memory writes included).' },
    RETRIEVAL: { description: 'A lookup of context: a retriever, a vector store search, a memory search.' },
    EMBEDDING: { description: 'A call to an embedding model.' },
    RERANK: { description: 'A call to a reranker.' },
    GUARDRAIL: { description: 'A guardrail or moderation check.' },
    EVALUATION: { description: 'An evaluator scoring an output.' },
    CHAIN: { description: "A framework step that groups others (a LangChain chain, a workflow, a prompt template's rendering)." },
    HTTP: { description: 'An HTTP request, served or sent, that is not a model call.' },
    DB: { description: 'A database call.' },
    OTHER: { description: 'Anything else.' },
  },
});
registerEnumType(StatusCode, {
  name: 'StatusCode',
  description: 'How a span ended, as OpenTelemetry reports it.',
  valuesMap: {
    UNSET: { description: 'The instrumentation set no status (the usual value of a span that succeeded).' },
    OK: { description: 'The instrumentation marked the span as successful.' },
    ERROR: { description: 'The span failed; statusMessage and the exception events in spanDetail say why.' },
  },
});
export enum SpanKind {
  UNSPECIFIED = 'UNSPECIFIED',
  INTERNAL = 'INTERNAL',
  SERVER = 'SERVER',
  CLIENT = 'CLIENT',
  PRODUCER = 'PRODUCER',
  CONSUMER = 'CONSUMER',
}
registerEnumType(CostDimension, {
  name: 'CostDimension',
  description: 'What costBreakdown groups by; each row carries the values of its group in `keys`, in the order asked.',
  valuesMap: {
    MODEL: { description: "The model name the spans carry (gen_ai.response.model, else gen_ai.request.model); '' when they name none." },
    PROVIDER: { description: "The model provider (openai, anthropic, …); '' when unknown." },
    SPAN_TYPE: { description: 'The span type (a SpanType value).' },
    SERVICE: { description: "The service.name of the resource that sent the spans; '' when unset." },
    DAY: { description: 'The UTC day the trace started, as YYYY-MM-DD.' },
    SESSION: { description: "The trace's session id; '' for traces without a session." },
  },
});
registerEnumType(SpanKind, {
  name: 'SpanKind',
  description: 'The OpenTelemetry span kind: where the span sits in a call between processes.',
  valuesMap: {
    UNSPECIFIED: { description: 'The exporter sent no kind.' },
    INTERNAL: { description: 'Work inside one process (the usual kind of agent, tool and chain spans).' },
    SERVER: { description: 'The handling of a request that came in (an HTTP or RPC server).' },
    CLIENT: { description: 'A request sent out and awaited (most model calls: an HTTP call to the provider).' },
    PRODUCER: { description: 'A message sent to a queue or stream, not awaited.' },
    CONSUMER: { description: 'The processing of a message taken from a queue or stream.' },
  },
});
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
  valuesMap: {
    EXPLICIT: {
      description:
        'The span stated its own cost (gen_ai.usage.cost, or the Langfuse or OpenInference cost attributes); it is kept as sent.',
    },
    PRICE_TABLE: { description: "Computed from the span's tokens and the bundled price table." },
    OVERRIDE: { description: "Computed from the span's tokens and the project's own price for the model (setModelPrice)." },
    UNPRICED: {
      description: 'The span has token usage but no price is known for its model: its costUsd reads 0 but the real cost is unknown.',
    },
  },
});

@ObjectType({ description: 'One operation of a trace, as the application exported it (message contents and events: spanDetail).' })
export class Span {
  @Field({ description: 'The OpenTelemetry span id: 16 lowercase hex characters, unique within its trace.' }) spanId!: string;
  @Field(() => String, { nullable: true, description: "The span id of this span's parent; null for the trace's root." })
  parentSpanId!: string | null;
  @Field({ description: 'The span name the instrumentation gave it (e.g. "chat gpt-4o", "execute_tool search").' }) name!: string;
  @Field(() => SpanType, { description: 'What the span does (LLM call, tool, agent step, …).' }) type!: SpanType;
  @Field(() => Date, { description: 'When the span started.' }) startTime!: string;
  @Field(() => Date, { description: 'When the span ended.' }) endTime!: string;
  @Field(() => Float, { description: 'endTime − startTime, in milliseconds (fractions down to the nanosecond).' }) durationMs!: number;
  @Field(() => StatusCode, { description: 'How the span ended.' }) statusCode!: StatusCode;
  @Field(() => String, {
    nullable: true,
    description: "The status description the span ended with (an error's message), when it gave one.",
  })
  statusMessage!: string | null;
  @Field(() => SpanKind, { description: 'The OpenTelemetry span kind.' }) kind!: SpanKind;
  @Field(() => String, {
    nullable: true,
    description: 'The model the span used (gen_ai.response.model, else gen_ai.request.model); null when it names none.',
  })
  model!: string | null;
  @Field(() => SafeIntScalar, {
    description:
      "This span's own input tokens, cached ones included: 0 for a span that only repeats its children's usage (see statedInputTokens).",
  })
  inputTokens!: number;
  @Field(() => SafeIntScalar, { description: "This span's own output tokens: 0 for a span that only repeats its children's usage." })
  outputTokens!: number;
  @Field(() => Float, {
    description: "This span's own cost in USD: the spans of a trace add up to its costUsd (a wrapper's repeated totals count 0).",
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
  @Field(() => Float, { nullable: true, description: 'The cost in USD of the usage such a span stated (see statedInputTokens).' })
  statedCostUsd!: number | null;
  @Field(() => JSONScalar, {
    nullable: true,
    description: 'Span attributes as an object (key → string, number, boolean or array), message contents excluded (see spanDetail).',
  })
  attributes!: Record<string, unknown> | null;
  @Field({
    description: 'Opaque: `trace { spans(after: cursor) }` continues with the spans after this one, in (start time, span id) order.',
  })
  cursor!: string;
}

@ObjectType({ description: "One span on a trace's critical path (Trace.criticalPath)." })
export class CriticalPathStep {
  @Field({ description: 'The span id (16 hex characters).' }) spanId!: string;
  @Field({ description: 'The span name.' }) name!: string;
  @Field(() => Float, { description: "The span's whole duration, in milliseconds." }) durationMs!: number;
  @Field(() => Float, { description: 'Time of this span on the path not spent in its children on the path, in milliseconds.' })
  selfMs!: number;
}

@ObjectType({ description: 'A score sent for a trace or one of its spans (POST /v1/feedback, submitFeedback, Langfuse scores).' })
export class FeedbackScore {
  @Field({ description: 'The score name, such as "helpful" or "thumbs".' }) name!: string;
  @Field(() => JSONScalar, { description: 'The value: a number (NUMERIC), true or false (BOOLEAN), or a string (CATEGORICAL, TEXT).' })
  value!: unknown;
  @Field(() => String, { nullable: true, description: 'The comment sent with the score; null when none was.' }) comment!: string | null;
}

@ObjectType({ description: 'Something that stands out in a trace, found by the trace analysis.' })
export class Finding {
  @Field({
    description:
      'What was found: CRITICAL_PATH_DOMINATED_BY, UNACCOUNTED_TIME, RETRY, LOOP, N_PLUS_ONE, LOW_PARALLELISM, or SPANS_TRUNCATED (the analysis saw only the first spans).',
  })
  kind!: string;
  @Field({ description: 'The finding in a sentence, with its figures.' }) message!: string;
  @Field(() => [String], { description: 'The ids of the spans it is about; empty for SPANS_TRUNCATED.' }) spanIds!: string[];
}

@ObjectType({ description: 'A trace: one request or agent run, every span sharing one trace id, with its figures summed over its spans.' })
export class Trace {
  @Field({ description: 'The OpenTelemetry trace id: 32 lowercase hex characters.' }) traceId!: string;
  @Field(() => String, {
    nullable: true,
    description:
      'The session the trace belongs to (session.id, gen_ai.conversation.id and the like, on a span or its resource); null when none says.',
  })
  sessionId!: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'The end user the trace served (user.id, enduser.id and the like); null when none says.',
  })
  userId!: string | null;
  @Field(() => String, { nullable: true, description: "The root span's name; null while the root span has not arrived." })
  rootName!: string | null;
  @Field(() => Date, { description: 'When its first span started.' }) startTime!: string;
  @Field(() => Float, { description: 'Wall time from the first span start to the last span end, in milliseconds.' }) durationMs!: number;
  @Field(() => Int, {
    description:
      'Agent iterations: agent.iterations as the root span states it, else the AGENT spans directly under the root, else the successful LLM calls.',
  })
  iterations!: number;
  @Field(() => Float, { description: 'Cost of all its spans in USD (each span once: wrappers repeating their children count 0).' })
  costUsd!: number;
  @Field(() => SafeIntScalar, { description: 'Input tokens of all its spans, cached reads and cache writes included.' })
  inputTokens!: number;
  @Field(() => SafeIntScalar, { description: 'Output tokens of all its spans, reasoning tokens included.' }) outputTokens!: number;
  @Field(() => Int, { description: 'Spans that ended with status ERROR.' }) errorCount!: number;
  @Field(() => Int, { description: 'LLM spans (model calls), failed ones included.' }) llmCalls!: number;
  @Field(() => [String], { description: 'The models its spans used, sorted; empty when none named one.' }) models!: string[];
  @Field(() => [String], { description: 'The tools called in it (gen_ai.tool.name and the like), sorted; empty when none.' })
  toolsUsed!: string[];
  @Field(() => [FeedbackScore], { description: 'Scores sent for this trace (or its spans), oldest first.' }) feedback!: FeedbackScore[];
}

@ObjectType({ description: 'Where a page ends and whether another follows.' })
export class PageInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Pass as `after` to get the next page; null when this page is empty.',
  })
  endCursor!: string | null;
  @Field({ description: 'Whether more items follow this page.' }) hasNextPage!: boolean;
}

@ObjectType({ description: 'A page of traces, latest start first.' })
export class TraceConnection {
  @Field(() => [Trace], { description: 'The traces of this page.' }) nodes!: Trace[];
  @Field(() => SafeIntScalar, { description: 'How many traces match the filter, over all pages.' }) totalCount!: number;
  @Field(() => PageInfo, { description: 'The cursor of the next page.' }) pageInfo!: PageInfo;
}

@ObjectType({ description: 'Latency and cost of the traces that took one number of agent iterations.' })
export class IterationLatency {
  @Field(() => Int, { description: 'The number of iterations (Trace.iterations) of this group.' }) iterations!: number;
  @Field(() => SafeIntScalar, { description: 'Traces with that many iterations.' }) traceCount!: number;
  @Field(() => Float, { description: 'Median trace duration, in milliseconds (exact, inclusive).' }) p50Ms!: number;
  @Field(() => Float, { description: '95th percentile of trace duration, in milliseconds (exact, inclusive).' }) p95Ms!: number;
  @Field(() => Float, { description: '99th percentile of trace duration, in milliseconds (exact, inclusive).' }) p99Ms!: number;
  @Field(() => Float, { description: 'Mean cost of a trace, in USD.' }) avgCostUsd!: number;
}

@ObjectType({ description: "A session's scores of one name." })
export class SessionFeedback {
  @Field({ description: 'The score name.' }) name!: string;
  @Field(() => Int, { description: "Scores of that name on the session's traces." }) count!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Mean of the numeric ones (BOOLEAN counts true as 1); null when all are text (CATEGORICAL, TEXT).',
  })
  avg!: number | null;
}

@ObjectType({ description: 'A session: the traces sharing one session id (a conversation, a user’s visit), with their figures summed.' })
export class Session {
  @Field({ description: 'The session id the spans carried.' }) sessionId!: string;
  @Field(() => SafeIntScalar, { description: 'Traces in the session.' }) traceCount!: number;
  @Field(() => Float, { description: 'Cost of all its traces, in USD.' }) costUsd!: number;
  @Field(() => SafeIntScalar, { description: 'Input tokens of all its traces, cached ones included.' }) inputTokens!: number;
  @Field(() => SafeIntScalar, { description: 'Output tokens of all its traces.' }) outputTokens!: number;
  @Field(() => Date, { description: 'When its first span started.' }) firstSeen!: string;
  @Field(() => Date, { description: 'When its last span ended.' }) lastSeen!: string;
  @Field(() => [SessionFeedback], { description: "Scores sent for the session's traces, per score name, by name." })
  feedback!: SessionFeedback[];
}

@ObjectType({ description: 'A page of sessions, most expensive first.' })
export class SessionConnection {
  @Field(() => [Session], { description: 'The sessions of this page.' }) nodes!: Session[];
  @Field(() => SafeIntScalar, { description: 'How many sessions match the filter, over all pages.' }) totalCount!: number;
  @Field(() => PageInfo, { description: 'The cursor of the next page.' }) pageInfo!: PageInfo;
}

@ObjectType({ description: 'Cost and tokens of one group of costBreakdown.' })
export class CostRow {
  @Field(() => [String], { description: "The group's value of each groupBy dimension, in the order asked ('' where a span had none)." })
  keys!: string[];
  @Field(() => Float, { description: 'Cost of the group, in USD.' }) costUsd!: number;
  @Field(() => SafeIntScalar, { description: 'Input tokens of the group, cached ones included.' }) inputTokens!: number;
  @Field(() => SafeIntScalar, { description: 'Output tokens of the group.' }) outputTokens!: number;
  @Field(() => SafeIntScalar, {
    description:
      "Spans in this group that own their usage. A wrapper span repeating its children's totals (an agent span carrying summed tokens) is left out: its tokens would count twice.",
  })
  spanCount!: number;
}

@ObjectType({ description: 'Something that happened during a span at one instant: an exception, a retry, a streamed first token.' })
export class SpanEvent {
  @Field({ description: 'The event name, such as "exception" or "gen_ai.content.prompt".' }) name!: string;
  @Field(() => Date, { description: 'When it happened.' }) time!: string;
  @Field(() => JSONScalar, { description: 'Its attributes, such as exception.type, exception.message and exception.stacktrace.' })
  attributes!: Record<string, unknown>;
}

@ObjectType({ description: 'Everything stored of one span: attributes, resource, message contents and events.' })
export class SpanDetail {
  @Field({ description: 'The span id (16 hex characters).' }) spanId!: string;
  @Field(() => JSONScalar, { description: 'Span attributes as an object (key → string, number, boolean or array).' })
  attributes!: Record<string, unknown>;
  @Field(() => JSONScalar, {
    description: 'Attributes of the resource that sent the span (service.name, telemetry.sdk.language, …), as an object.',
  })
  resourceAttributes!: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'Message contents sent to the model (JSON text), when captured.' }) input!:
    string | null;
  @Field(() => String, { nullable: true, description: 'Message contents the model returned (JSON text), when captured.' }) output!:
    string | null;
  @Field(() => [SpanEvent], { description: 'The span events, in time order.' }) events!: SpanEvent[];
}

@InputType({ description: 'Matches traces with a span whose attribute `key` equals `value`.' })
export class AttributeFilter {
  @Field({ description: 'The attribute key, such as gen_ai.agent.name (at most 1,000 characters).' }) key!: string;
  @Field({ description: 'Compared with the stored value as text; numbers and booleans as JSON (42, true).' }) value!: string;
}

@InputType('FeedbackScoreFilter', { description: 'Matches by a score name and, optionally, the range of its mean.' })
export class FeedbackScoreFilterInput {
  @Field({ description: 'The score name.' }) name!: string;
  @Field(() => Float, { nullable: true, description: 'Lowest mean score (NUMERIC; BOOLEAN counts true as 1).' }) min?: number;
  @Field(() => Float, { nullable: true, description: 'Highest mean score (NUMERIC; BOOLEAN counts true as 1).' }) max?: number;
}

@InputType('TraceFilter', { description: 'Which traces a query covers: every condition given must hold; none given, every trace.' })
export class TraceFilterInput {
  @Field(() => FeedbackScoreFilterInput, {
    nullable: true,
    description: 'Only traces with this score; with min/max, whose mean score is in range.',
  })
  feedback?: FeedbackScoreFilterInput;
  @Field(() => Date, { nullable: true, description: 'Traces starting at or after this instant; absent: from the first.' }) from?: Date;
  @Field(() => Date, { nullable: true, description: 'Traces starting before this instant (exclusive); absent: no end.' }) to?: Date;
  @Field(() => String, { nullable: true, description: 'Only the traces of this session.' }) sessionId?: string;
  @Field(() => String, { nullable: true, description: 'Only the traces of this end user.' }) userId?: string;
  @Field(() => String, { nullable: true, description: 'Only traces whose root span has this name.' }) rootName?: string;
  @Field(() => Boolean, { nullable: true, description: 'true: only traces with an ERROR span; false: only traces without.' })
  hasError?: boolean;
  @Field(() => Int, { nullable: true, description: 'Only traces with at least this many iterations.' }) minIterations?: number;
  @Field(() => Int, { nullable: true, description: 'Only traces with at most this many iterations.' }) maxIterations?: number;
  @Field(() => String, { nullable: true, description: 'Only traces with a span that used this model.' }) model?: string;
  @Field(() => [AttributeFilter], {
    nullable: true,
    description: 'Only traces with a span matching each of these (at most 10).',
  })
  attributes?: AttributeFilter[];
}

@InputType('TimeRange', { description: 'A time range: from (inclusive) to (exclusive); an absent end leaves that side open.' })
export class TimeRangeInput {
  @Field(() => Date, { nullable: true, description: 'From this instant on (inclusive); absent: from the first.' }) from?: Date;
  @Field(() => Date, { nullable: true, description: 'Before this instant (exclusive); absent: no end.' }) to?: Date;
}

@InputType('SessionFilter', { description: 'Which sessions a query covers: every condition given must hold.' })
export class SessionFilterInput {
  @Field(() => FeedbackScoreFilterInput, {
    nullable: true,
    description: 'Only sessions with this score; with min/max, whose mean over the session is in range.',
  })
  feedback?: FeedbackScoreFilterInput;
  @Field(() => Date, {
    nullable: true,
    description: 'Sessions still active at or after this instant (their last span ended then or later).',
  })
  from?: Date;
  @Field(() => Date, { nullable: true, description: 'Sessions that started before this instant (exclusive).' }) to?: Date;
  @Field(() => String, { nullable: true, description: 'Only the sessions of this end user.' }) userId?: string;
}

export { ID };

@ObjectType({ description: 'Figures of the spans of one type.' })
export class SpanTypeStats {
  @Field(() => SpanType, { description: 'The span type.' }) type!: SpanType;
  @Field(() => SafeIntScalar, { description: 'Spans of this type.' }) spanCount!: number;
  @Field(() => Float, { description: 'Share of them that ended with ERROR, from 0 to 1.' }) errorRate!: number;
  @Field(() => Float, { description: 'Median span duration, in milliseconds.' }) p50Ms!: number;
  @Field(() => Float, { description: '95th percentile of span duration, in milliseconds.' }) p95Ms!: number;
  @Field(() => Float, { description: '99th percentile of span duration, in milliseconds.' }) p99Ms!: number;
}

@ObjectType({ description: 'Figures of the calls to one model (LLM spans that own their usage).' })
export class ModelStats {
  @Field({ description: 'The model name.' }) model!: string;
  @Field(() => String, { nullable: true, description: "The model's provider (openai, anthropic, …); null when the spans do not say." })
  provider!: string | null;
  @Field(() => SafeIntScalar, { description: 'Calls to the model.' }) calls!: number;
  @Field(() => SafeIntScalar, { description: 'Input tokens of those calls, cached ones included.' }) inputTokens!: number;
  @Field(() => SafeIntScalar, { description: 'Output tokens of those calls.' }) outputTokens!: number;
  @Field(() => Float, { description: 'Cost of those calls, in USD.' }) costUsd!: number;
  @Field(() => SafeIntScalar, {
    description:
      'Calls with usage but no price for their model: costUsd leaves them out, so a non-zero count means the cost is understated.',
  })
  unpricedCalls!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Median time to first token of streamed calls, in milliseconds; null when no call reported one.',
  })
  ttftP50Ms!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: '95th percentile of time to first token, in milliseconds; null when no call reported one.',
  })
  ttftP95Ms!: number | null;
  @Field(() => Float, {
    nullable: true,
    description: 'Output tokens per second of generation time (after the first token); null when the calls took no measurable time.',
  })
  outputTokensPerSecond!: number | null;
}

@ObjectType({ description: 'Spans of one reason.' })
export class RejectedCount {
  @Field({ description: 'The reason, such as invalid_trace_id or store_refused.' }) reason!: string;
  @Field(() => Int, { description: 'Spans with that reason.' }) spans!: number;
}

@ObjectType({ description: "What happened to the project's exported spans in one minute (UTC)." })
export class IngestMinute {
  @Field(() => Date, { description: 'The start of the minute.' }) minute!: string;
  @Field(() => Int, { description: 'Spans in the exports the gateway answered 200, counted in the minute it took them.' })
  received!: number;
  @Field(() => Int, { description: 'Of the received spans, the valid ones: each is stored or dead-lettered, never dropped.' })
  accepted!: number;
  @Field(() => Int, { description: 'Spans refused one by one as invalid (bad ids or timestamps), by reason in rejectedByReason.' })
  rejected!: number;
  @Field(() => Int, { description: "Spans of exports refused with 429: the project's ingest rate limit or its share of the queue." })
  rateLimited!: number;
  @Field(() => Int, { description: 'Spans of exports refused whole (undecodable, queue full or unavailable).' }) refused!: number;
  @Field(() => [RejectedCount], {
    description:
      'rejected by reason: invalid_trace_id, invalid_span_id, invalid_parent_span_id, end_before_start, missing_timestamps, timestamp_out_of_range.',
  })
  rejectedByReason!: RejectedCount[];
  @Field(() => Int, {
    description:
      'Spans accepted, then kept in the dead letters instead of stored (the store refused them, or their export ran out of retries); an operator can replay them.',
  })
  deadLettered!: number;
  @Field(() => [RejectedCount], { description: 'deadLettered by reason: store_refused, retries_exhausted, stalled, poison_export.' })
  deadLetteredByReason!: RejectedCount[];
}
