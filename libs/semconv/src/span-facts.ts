import { StatusCode, type DecodedSpan } from '@spanforge/otlp';
import { firstString, readString } from './attribute-read';
import type { SpanClassification } from './span-type';

const AGENT_NAME_KEYS = ['gen_ai.agent.name', 'agent.name'] as const; // OTel GenAI, OpenInference (its AGENT_NAME)
const TOOL_NAME_KEYS = ['gen_ai.tool.name', 'tool.name', 'ai.toolCall.name'] as const; // OTel GenAI, OpenInference, Vercel legacy

/**
 * error.type when the span failed, else the exception.type of its first `exception` event when
 * its status is ERROR. A span whose status is OK reports no error type, whatever its attributes
 * say, so nothing here contradicts the status the span row keeps.
 */
export function readErrorType(span: DecodedSpan): string {
  if (span.statusCode === StatusCode.OK) return '';
  const stated = readString(span.attributes, 'error.type');
  if (stated !== undefined) return stated;
  if (span.statusCode !== StatusCode.ERROR) return '';
  for (const event of span.events) {
    if (event.name === 'exception') return readString(event.attributes, 'exception.type') ?? '';
  }
  return '';
}

/** The entity name of an OpenLLMetry span of the given kind (traceloop.entity.name is the name of the function the Traceloop SDK decorated). */
function traceloopEntity(span: DecodedSpan, kind: string): string | undefined {
  return readString(span.attributes, 'traceloop.span.kind') === kind ? readString(span.attributes, 'traceloop.entity.name') : undefined;
}

/** A Langfuse agent/tool observation is named after the agent/tool it runs. */
function langfuseName(span: DecodedSpan, classification: SpanClassification, type: string): string | undefined {
  return classification.convention === 'langfuse' && classification.operation === type && span.name !== '' ? span.name : undefined;
}

/** The agent this span belongs to; on model and tool spans too, where emitters set it (cost by agent). */
export function readAgentName(span: DecodedSpan, classification: SpanClassification): string {
  return (
    firstString(span.attributes, AGENT_NAME_KEYS) ??
    (span.scope.name === 'pydantic-ai' ? readString(span.attributes, 'agent_name') : undefined) ?? // pydantic-ai instrumentation v2
    traceloopEntity(span, 'agent') ??
    langfuseName(span, classification, 'agent') ??
    ''
  );
}

/**
 * An OpenInference TOOL span is named after its tool, and `tool.name` is optional: the JS
 * @arizeai/openinference-core `traceTool(fn, { name })` / `withSpan` helpers set only the span
 * name (`name || fn.name`) and the kind (openinference-core helpers/withSpan.ts).
 */
function openInferenceToolName(span: DecodedSpan, classification: SpanClassification): string | undefined {
  return classification.convention === 'openinference' && span.name !== '' ? span.name : undefined;
}

/**
 * The tool a TOOL span runs. Only TOOL spans: OpenLIT also writes gen_ai.tool.name on chat spans,
 * listing the calls the model requested, which is not a tool execution.
 */
export function readToolName(span: DecodedSpan, classification: SpanClassification): string {
  if (classification.spanType !== 'TOOL') return '';
  return (
    firstString(span.attributes, TOOL_NAME_KEYS) ??
    traceloopEntity(span, 'tool') ??
    langfuseName(span, classification, 'tool') ??
    openInferenceToolName(span, classification) ??
    ''
  );
}
