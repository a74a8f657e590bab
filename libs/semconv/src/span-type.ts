import type { Attributes, DecodedSpan } from '@spanforge/otlp';
import { readString } from './attribute-read';
import { llmScopeConvention } from './llm-scope';
import type { SpanType } from './semconv.model';

/** What decided a span's type: the convention, its type, and the operation value it read. */
export interface SpanClassification {
  spanType: SpanType;
  /** 'langfuse' | 'openinference' | 'gen_ai' | 'openllmetry' | 'vercel_ai' | 'http' | 'db' | 'default' */
  convention: string;
  /** The raw operation value of the deciding convention ('chat', 'LLM', 'workflow', 'ai.generateText', 'GET'), or ''. */
  operation: string;
}

/** Conventions that only LLM instrumentations emit: a root span decided by one of them belongs to a GenAI trace. */
export const LLM_CONVENTIONS: ReadonlySet<string> = new Set(['langfuse', 'openinference', 'gen_ai', 'openllmetry', 'vercel_ai']);

// Lookups use Map, never object literals: attribute values are sender-controlled, and
// `{...}['constructor']` would answer Object's own property.

/** Langfuse observation types (langfuse/langfuse ObservationTypeMapper.ts): `span` and `event` say nothing, so other signals decide. */
const LANGFUSE_TYPES = new Map<string, SpanType>([
  ['generation', 'LLM'],
  ['agent', 'AGENT'],
  ['tool', 'TOOL'],
  ['chain', 'CHAIN'],
  ['retriever', 'RETRIEVAL'],
  ['evaluator', 'EVALUATION'],
  ['embedding', 'EMBEDDING'],
  ['guardrail', 'GUARDRAIL'],
]);

/**
 * OpenInference `openinference.span.kind` (Arize-ai/openinference spec/semantic_conventions.md).
 * PROMPT is the rendering of a prompt template: a step of a chain, no model call, so CHAIN.
 */
const OPENINFERENCE_KINDS = new Map<string, SpanType>([
  ['LLM', 'LLM'],
  ['CHAIN', 'CHAIN'],
  ['TOOL', 'TOOL'],
  ['RETRIEVER', 'RETRIEVAL'],
  ['EMBEDDING', 'EMBEDDING'],
  ['AGENT', 'AGENT'],
  ['RERANKER', 'RERANK'],
  ['GUARDRAIL', 'GUARDRAIL'],
  ['EVALUATOR', 'EVALUATION'],
  ['PROMPT', 'CHAIN'],
]);

/**
 * `gen_ai.operation.name` as the OTel GenAI conventions define it, with the deprecated and custom
 * values seen in the wild. Memory writes and store management are actions an agent takes (frameworks expose them to
 * the model as tools), so TOOL keeps them in "tools used"; only search_memory reads context, like
 * a retrieval. OpenLIT's image/audio generation are paid model calls, so LLM.
 */
const GEN_AI_OPERATIONS = new Map<string, SpanType>([
  ['chat', 'LLM'],
  ['generate_content', 'LLM'],
  ['text_completion', 'LLM'],
  ['completion', 'LLM'], // older emitters (Langfuse keeps the mapping)
  ['generate', 'LLM'],
  ['fetch_response', 'LLM'], // semantic-conventions-genai: carries no usage
  ['llm_request', 'LLM'], // OpenLLMetry GenAICustomOperationName
  ['image', 'LLM'], // OpenLIT
  ['audio', 'LLM'],
  ['embeddings', 'EMBEDDING'],
  ['embedding', 'EMBEDDING'],
  ['retrieval', 'RETRIEVAL'],
  ['vector_db_retrieve', 'RETRIEVAL'], // OpenLLMetry custom
  ['search_memory', 'RETRIEVAL'],
  ['create_memory_store', 'TOOL'],
  ['delete_memory_store', 'TOOL'],
  ['create_memory', 'TOOL'],
  ['update_memory', 'TOOL'],
  ['upsert_memory', 'TOOL'],
  ['delete_memory', 'TOOL'],
  ['execute_tool', 'TOOL'],
  ['invoke_agent', 'AGENT'],
  ['create_agent', 'AGENT'],
  ['plan', 'AGENT'],
  ['agent_step', 'AGENT'], // Vercel AI SDK v7 step span (vercel/ai packages/otel/src/open-telemetry.ts)
  ['agent', 'AGENT'], // OpenLIT
  ['invoke_workflow', 'CHAIN'],
  ['execute_task', 'CHAIN'], // OpenLLMetry / OpenLIT custom
  ['framework', 'CHAIN'], // OpenLIT
  ['handle_conversation_turn', 'RUN'],
  ['rerank', 'RERANK'], // Vercel AI SDK v7
  ['apply_guardrail', 'GUARDRAIL'],
  ['run_guardrail', 'GUARDRAIL'],
  ['vectordb', 'DB'], // OpenLIT vector-store client calls (insert and query alike)
]);

/** OpenLLMetry `traceloop.span.kind` (its TraceloopSpanKindValues); `unknown` decides nothing. */
const TRACELOOP_KINDS = new Map<string, SpanType>([
  ['workflow', 'CHAIN'],
  ['task', 'CHAIN'],
  ['agent', 'AGENT'],
  ['tool', 'TOOL'],
]);

/** OpenLLMetry `llm.request.type` (its LLMRequestTypeValues). */
const LLM_REQUEST_TYPES = new Map<string, SpanType>([
  ['chat', 'LLM'],
  ['completion', 'LLM'],
  ['embedding', 'EMBEDDING'],
  ['rerank', 'RERANK'],
]);

/**
 * Vercel AI SDK legacy spans by `ai.operationId` (AI SDK telemetry docs, "Legacy AI SDK Spans"). The
 * outer ai.generateText/streamText/... span wraps every step and repeats their usage: CHAIN.
 */
const VERCEL_OPERATIONS = new Map<string, SpanType>([
  ['ai.generateText', 'CHAIN'],
  ['ai.streamText', 'CHAIN'],
  ['ai.generateObject', 'CHAIN'],
  ['ai.streamObject', 'CHAIN'],
  ['ai.embed', 'CHAIN'],
  ['ai.embedMany', 'CHAIN'],
  ['ai.rerank', 'CHAIN'],
  ['ai.generateText.doGenerate', 'LLM'],
  ['ai.streamText.doStream', 'LLM'],
  ['ai.generateObject.doGenerate', 'LLM'],
  ['ai.streamObject.doStream', 'LLM'],
  ['ai.embed.doEmbed', 'EMBEDDING'],
  ['ai.embedMany.doEmbed', 'EMBEDDING'],
  ['ai.rerank.doRerank', 'RERANK'],
  ['ai.toolCall', 'TOOL'],
]);

const HTTP_KEYS = ['http.request.method', 'http.method', 'url.full', 'http.url', 'http.route'] as const;

type Decided = SpanClassification | undefined;

function byTable(
  attributes: Attributes,
  key: string,
  table: ReadonlyMap<string, SpanType>,
  convention: string,
  normalize: (v: string) => string,
): Decided {
  const value = readString(attributes, key);
  if (value === undefined) return undefined;
  const spanType = table.get(normalize(value));
  return spanType === undefined ? undefined : { spanType, convention, operation: value };
}

const lower = (v: string): string => v.toLowerCase();
const upper = (v: string): string => v.toUpperCase();

function fromLangfuse(attributes: Attributes): Decided {
  const decided = byTable(attributes, 'langfuse.observation.type', LANGFUSE_TYPES, 'langfuse', lower);
  if (decided) return decided;
  // Python SDK <= 3.3.0 sent generations as type `span` (langfuse/langfuse #8682; Langfuse's
  // ObservationTypeMapper checks this first).
  if (
    readString(attributes, 'langfuse.observation.type') === 'span' &&
    ('langfuse.observation.model.name' in attributes || 'langfuse.observation.usage_details' in attributes)
  ) {
    return { spanType: 'LLM', convention: 'langfuse', operation: 'span' };
  }
  return undefined;
}

function fromVercel(span: DecodedSpan): Decided {
  // The span name is the operation id too, but only trust it under the SDK's own tracer ('ai').
  const operationId =
    readString(span.attributes, 'ai.operationId') ?? (span.scope.name === 'ai' && span.name.startsWith('ai.') ? span.name : undefined);
  if (operationId === undefined) return undefined;
  const known = VERCEL_OPERATIONS.get(operationId);
  if (known) return { spanType: known, convention: 'vercel_ai', operation: operationId };
  if (operationId.endsWith('.doGenerate') || operationId.endsWith('.doStream'))
    return { spanType: 'LLM', convention: 'vercel_ai', operation: operationId };
  if (operationId.endsWith('.doEmbed')) return { spanType: 'EMBEDDING', convention: 'vercel_ai', operation: operationId };
  return { spanType: 'OTHER', convention: 'vercel_ai', operation: operationId };
}

/**
 * GenAI spans without an operation name: pydantic-ai v2 tool spans ('running tool') carry only
 * gen_ai.tool.*, its 'agent run' span only agent_name, and pre-v1.27 inference spans only a model
 * (Langfuse's ObservationTypeMapper reads them the same way).
 */
function fromGenAiWithoutOperation(span: DecodedSpan): Decided {
  const a = span.attributes;
  if ('gen_ai.tool.name' in a || 'gen_ai.tool.call.id' in a) return { spanType: 'TOOL', convention: 'gen_ai', operation: '' };
  if ('gen_ai.agent.name' in a || (span.scope.name === 'pydantic-ai' && 'agent_name' in a))
    return { spanType: 'AGENT', convention: 'gen_ai', operation: '' };
  if ('gen_ai.request.model' in a || 'gen_ai.response.model' in a) return { spanType: 'LLM', convention: 'gen_ai', operation: '' };
  return undefined;
}

function fromInfrastructure(attributes: Attributes): Decided {
  for (const key of HTTP_KEYS) {
    if (key in attributes)
      return {
        spanType: 'HTTP',
        convention: 'http',
        operation: readString(attributes, 'http.request.method') ?? readString(attributes, 'http.method') ?? '',
      };
  }
  if ('db.system.name' in attributes || 'db.system' in attributes) {
    return {
      spanType: 'DB',
      convention: 'db',
      operation: readString(attributes, 'db.operation.name') ?? readString(attributes, 'db.operation') ?? '',
    };
  }
  return undefined;
}

/** The type of one span by the first convention that names it (priority order: libs/semconv/README.md, "Type priority"). */
export function classifyByConvention(span: DecodedSpan): SpanClassification {
  const a = span.attributes;
  return (
    fromLangfuse(a) ??
    byTable(a, 'openinference.span.kind', OPENINFERENCE_KINDS, 'openinference', upper) ??
    byTable(a, 'gen_ai.operation.name', GEN_AI_OPERATIONS, 'gen_ai', lower) ??
    byTable(a, 'traceloop.span.kind', TRACELOOP_KINDS, 'openllmetry', lower) ??
    byTable(a, 'llm.request.type', LLM_REQUEST_TYPES, 'openllmetry', lower) ??
    fromVercel(span) ??
    fromGenAiWithoutOperation(span) ??
    fromInfrastructure(a) ?? { spanType: 'OTHER', convention: 'default', operation: '' }
  );
}

/**
 * The root span of a GenAI trace is RUN (a public rule): the root types that become RUN, here when
 * the root carries an LLM signal itself, and in the worker's upkeep once the trace's other spans
 * show it is GenAI (GEN_AI_TRACE_TYPES).
 */
export const ROOT_UPGRADABLE_TYPES: readonly SpanType[] = ['AGENT', 'CHAIN', 'OTHER', 'HTTP'];
const ROOT_UPGRADABLE: ReadonlySet<SpanType> = new Set<SpanType>(ROOT_UPGRADABLE_TYPES);

/** A trace with a span of one of these types (an LLM call among them) is a GenAI trace. */
export const GEN_AI_TRACE_TYPES: readonly SpanType[] = ['RUN', 'LLM', 'AGENT', 'EMBEDDING', 'RETRIEVAL', 'RERANK'];

/** Whether a root span of this type becomes RUN in a GenAI trace. */
export function isUpgradableRoot(type: string): boolean {
  return (ROOT_UPGRADABLE as ReadonlySet<string>).has(type);
}

/** The type a stored root span shows: RUN when its type is upgradable and its trace is GenAI (spans stored before the upkeep upgraded them). */
export function rootSpanType(stored: string, genAiTrace: boolean): string {
  return genAiTrace && isUpgradableRoot(stored) ? 'RUN' : stored;
}

/** Whether spans of these types make a GenAI trace. */
export function isGenAiTrace(spanTypes: Iterable<string>): boolean {
  for (const type of spanTypes) if ((GEN_AI_TRACE_TYPES as readonly string[]).includes(type)) return true;
  return false;
}

/** Attributes that only LLM conventions set; checked on root spans only, so a handful of lookups. */
const LLM_SIGNAL_KEYS = [
  'gen_ai.operation.name',
  'gen_ai.provider.name',
  'gen_ai.system',
  'gen_ai.request.model',
  'gen_ai.agent.name',
  'gen_ai.conversation.id',
  'openinference.span.kind',
  'traceloop.span.kind',
  'traceloop.workflow.name',
  'llm.request.type',
  'ai.operationId',
  'langfuse.observation.type',
  'langfuse.trace.name',
] as const;

/**
 * The root span of a GenAI trace is RUN. A root (no parent) that is an agent,
 * chain, plain or HTTP span becomes RUN when it carries an LLM signal itself: an LLM convention
 * decided it, it has an LLM-only attribute, or a known LLM library's tracer made it. A plain root
 * whose children are LLM spans but which says nothing itself cannot be recognised from one span;
 * the trace rollup upgrades it at query time.
 */
export function classifySpan(span: DecodedSpan): SpanClassification {
  const decided = classifyByConvention(span);
  if (span.parentSpanId !== '' || !ROOT_UPGRADABLE.has(decided.spanType)) return decided;
  if (LLM_CONVENTIONS.has(decided.convention) || LLM_SIGNAL_KEYS.some((key) => key in span.attributes)) {
    return { ...decided, spanType: 'RUN' };
  }
  const scopeConvention = llmScopeConvention(span.scope.name);
  if (scopeConvention === undefined) return decided;
  return {
    spanType: 'RUN',
    convention: decided.convention === 'default' ? scopeConvention : decided.convention,
    operation: decided.operation,
  };
}
