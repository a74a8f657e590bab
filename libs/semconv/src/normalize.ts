import { StatusCode, type DecodedSpan } from '@spanforge/otlp';
import { readString } from './attribute-read';
import { moveContent } from './content';
import { readExplicitCost } from './cost';
import { readIds, readIterations } from './ids';
import { readModelNames } from './model';
import { readProvider } from './provider';
import type { NormalizedSpan, SpanType } from './semconv.model';
import { readAgentName, readErrorType, readToolName } from './span-facts';
import { classifySpan } from './span-type';
import { readTtftMs } from './timing';
import { readUsage } from './usage';

/**
 * Only model calls own their usage. Every other span that carries tokens or a cost (agent,
 * chain, run, the Vercel ai.generateText wrapper, GenAI invoke_agent, OpenInference AGENT/CHAIN)
 * repeats its children's totals: the OTel GenAI conventions say so for invoke_agent
 * (open-telemetry/semantic-conventions-genai #469: "consumers should aggregate them from
 * gen_ai.client.inference spans instead"), and Langfuse skips usage on AI SDK agent spans for the
 * same reason (its isAiSdkAgentOperation). A rule on the span type alone needs no tree and no
 * per-convention list. What it cannot see from one span: two
 * instrumentations of the same call (an OpenInference LangChain LLM span around an OpenInference
 * OpenAI LLM span) are both LLM; the rollup has to keep only the innermost of nested model calls.
 */
const USAGE_OWNERS: ReadonlySet<SpanType> = new Set<SpanType>(['LLM', 'EMBEDDING', 'RERANK']);

/** Logfire writes a placeholder span when a long span starts and the real one when it ends (`logfire.span_type` 'pending_span', then the span itself). */
function isPlaceholder(span: DecodedSpan): boolean {
  return span.attributes['logfire.span_type'] === 'pending_span';
}

function dropped(span: DecodedSpan): NormalizedSpan {
  return {
    spanType: 'OTHER',
    convention: 'logfire',
    operation: '',
    sessionId: '',
    userId: '',
    runId: '',
    model: '',
    modelRequested: '',
    pricingModel: '',
    provider: '',
    usage: { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    usageIsAggregate: false,
    explicitCostUsd: undefined,
    ttftMs: undefined,
    errorType: '',
    agentName: '',
    toolName: '',
    iterations: undefined,
    input: '',
    output: '',
    attributes: span.attributes,
    drop: true,
  };
}

/**
 * One decoded OTLP span in our terms, whatever LLM convention its instrumentation follows:
 * type, model, provider, ids, exclusive token buckets, stated cost, TTFT, error type and message
 * contents moved out of the attributes. Pure: reads the span, never writes to it.
 */
export function normalizeSpan(span: DecodedSpan): NormalizedSpan {
  if (isPlaceholder(span)) return dropped(span);
  takeLangfuseErrorLevel(span);
  const attributes = span.attributes;
  const classification = classifySpan(span);
  const names = readModelNames(attributes);
  const provider = readProvider(attributes, names.model, names.pricingModel, names.isBedrockModelId);
  const usage = readUsage(span, provider);
  const explicitCostUsd = readExplicitCost(attributes);
  const content = moveContent(attributes);
  return {
    spanType: classification.spanType,
    convention: classification.convention,
    operation: classification.operation,
    ...readIds(span),
    model: names.model,
    modelRequested: names.modelRequested,
    pricingModel: names.pricingModel,
    provider,
    usage: usage.usage,
    usageIsAggregate: (usage.found || explicitCostUsd !== undefined) && !USAGE_OWNERS.has(classification.spanType),
    explicitCostUsd,
    ttftMs: readTtftMs(span),
    errorType: readErrorType(span),
    agentName: readAgentName(span, classification),
    toolName: readToolName(span, classification),
    iterations: readIterations(attributes),
    input: content.input,
    output: content.output,
    attributes: content.attributes,
    drop: false,
  };
}

/**
 * The Langfuse SDKs mark a failed observation with `langfuse.observation.level` ERROR and its
 * `status_message`, and may leave the OTel status unset: the span is an error like any other
 * (error counts, error rates, findings), with that message when the status gave none.
 */
function takeLangfuseErrorLevel(span: DecodedSpan): void {
  if (span.statusCode === StatusCode.ERROR || readString(span.attributes, 'langfuse.observation.level') !== 'ERROR') return;
  span.statusCode = StatusCode.ERROR;
  if (!span.statusMessage) span.statusMessage = readString(span.attributes, 'langfuse.observation.status_message') ?? '';
}
