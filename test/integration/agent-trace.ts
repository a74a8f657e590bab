import { SpanStatusCode, type Span } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { PriceTable, priceSpan } from '@spanforge/pricing';
import { SpanRecorder, exportSpans, exportSucceeded, otlpExporter } from '../support';
import type { IngestHarness } from './ingest-harness';

export interface LlmCall {
  model: string;
  provider: string;
  input: number;
  cacheRead: number;
  output: number;
  failed?: boolean;
}

/**
 * Records one agent trace, sends it with the real OTLP/HTTP protobuf exporter, and waits until the
 * project holds its spans and those of the `tracesBefore` traces of the same shape sent earlier;
 * returns its trace id.
 */
export async function sendAgentTrace(
  h: IngestHarness,
  project: { projectId: string; apiKey: string },
  trace: Parameters<typeof recordAgentTrace>[1],
  tracesBefore: number,
): Promise<string> {
  const recorder = new SpanRecorder();
  recordAgentTrace(recorder, trace);
  const spans = recorder.finished();
  expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), spans))).toBe(
    true,
  );
  await h.waitForSpans(project.projectId, (tracesBefore + 1) * spans.length);
  return expectedTrace(spans).traceId;
}

/**
 * Records one agent turn with a real SDK tracer: a root carrying the session (and, optionally,
 * gen_ai.agent.iterations), `iterations` AGENT children, each with one LLM call and a tool call,
 * so a test can compute every expected figure from what it sends.
 */
export function recordAgentTrace(
  recorder: SpanRecorder,
  options: { session: string; calls: LlmCall[]; start: number; rootIterations?: number },
) {
  const { tracer } = recorder;
  void tracer;
  let at = options.start;
  const root = recorder.span(
    'agent.run',
    {
      'session.id': options.session,
      'user.id': 'user-7',
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      ...(options.rootIterations === undefined ? {} : { 'gen_ai.agent.iterations': options.rootIterations }),
    },
    { start: at, end: 0 },
  );
  const spans: Span[] = [];
  for (const call of options.calls) {
    const agentStart = at;
    const agent = recorder.span(
      'invoke_agent planner',
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
      { start: agentStart, end: 0 },
      root,
    );
    const llm = recorder.span(
      `chat ${call.model}`,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': call.provider,
        'gen_ai.request.model': call.model,
        'gen_ai.response.model': call.model,
        'gen_ai.usage.input_tokens': call.input,
        'gen_ai.usage.cache_read.input_tokens': call.cacheRead,
        'gen_ai.usage.output_tokens': call.output,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'what is the weather in Lisbon?' }] }]),
      },
      { start: at + 1, end: at + 400 },
      agent,
      call.failed ? { code: SpanStatusCode.ERROR, message: 'provider error' } : undefined,
    );
    if (call.failed)
      llm.addEvent('exception', { 'exception.type': 'RateLimitError', 'exception.message': 'provider error: 429' }, at + 399);
    recorder.end(llm);
    const tool = recorder.span(
      'execute_tool get_weather',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' },
      { start: at + 401, end: at + 450 },
      agent,
    );
    recorder.end(tool);
    at += 500;
    (agent as Span & { plannedEnd: number }).plannedEnd = at;
    recorder.end(agent);
    spans.push(agent, llm, tool);
  }
  (root as Span & { plannedEnd: number }).plannedEnd = at + 10;
  recorder.end(root);
  return root;
}

const table = PriceTable.bundled();

/** The cost of one LLM span as sent: its tokens at the bundled price in force at its start. */
export function expectedLlmCost(span: ReadableSpan): number {
  const input = Number(span.attributes['gen_ai.usage.input_tokens']);
  const cacheRead = Number(span.attributes['gen_ai.usage.cache_read.input_tokens'] ?? 0);
  const output = Number(span.attributes['gen_ai.usage.output_tokens']);
  const usage = { inputUncached: input - cacheRead, cacheRead, cacheWrite: 0, output, reasoning: 0 };
  const startNanos = BigInt(span.startTime[0]) * 1_000_000_000n + BigInt(span.startTime[1]);
  return priceSpan(
    {
      pricingModel: String(span.attributes['gen_ai.response.model']),
      provider: String(span.attributes['gen_ai.provider.name']),
      usage,
      explicitCostUsd: undefined,
      startTime: startNanos,
    },
    table,
  ).costUsd;
}

/** The figures the API promises for a trace (wall time, iterations, tokens, cost, errors), computed from the spans as sent. */
export function expectedTrace(spans: ReadableSpan[]) {
  const toMs = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
  const llm = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
  let inputTokens = 0;
  let outputTokens = 0;
  let cost = 0;
  for (const span of llm) {
    inputTokens += Number(span.attributes['gen_ai.usage.input_tokens']);
    outputTokens += Number(span.attributes['gen_ai.usage.output_tokens']);
    cost += expectedLlmCost(span);
  }
  const root = spans.find((s) => !s.parentSpanContext)!;
  const agentChildren = spans.filter(
    (s) => s.parentSpanContext?.spanId === root.spanContext().spanId && s.attributes['gen_ai.operation.name'] === 'invoke_agent',
  );
  const stated = root.attributes['gen_ai.agent.iterations'];
  return {
    traceId: root.spanContext().traceId,
    spanCount: spans.length,
    durationMs: Math.max(...spans.map((s) => toMs(s.endTime))) - Math.min(...spans.map((s) => toMs(s.startTime))),
    inputTokens,
    outputTokens,
    costUsd: cost,
    errorCount: spans.filter((s) => s.status.code === SpanStatusCode.ERROR).length,
    llmCalls: llm.length,
    iterations: stated !== undefined ? Number(stated) : agentChildren.length,
    session: String(root.attributes['session.id']),
  };
}

const endNs = (s: ReadableSpan) => s.endTime[0] * 1e9 + s.endTime[1];
const startNs = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];

/**
 * The critical path of the spans sent, root first, computed here from the API's definition so
 * tests compare the two: from a span's end, step back through the child that
 * ended last before it, then through the earlier children that ended before that child started.
 */
export function expectedCriticalPath(spans: ReadableSpan[]): ReadableSpan[] {
  const children = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    if (!parent) continue;
    const siblings = children.get(parent);
    if (siblings) siblings.push(span);
    else children.set(parent, [span]);
  }
  const path: ReadableSpan[] = [];
  const walk = (span: ReadableSpan) => {
    path.push(span);
    // Latest end first; ties keep the order sent.
    const byEnd = [...(children.get(span.spanContext().spanId) ?? [])].sort((a, b) => endNs(b) - endNs(a));
    const chosen: ReadableSpan[] = [];
    let limit = endNs(span);
    for (const child of byEnd) {
      if (endNs(child) > limit) continue;
      chosen.push(child);
      limit = startNs(child);
    }
    for (const child of chosen.reverse()) walk(child);
  };
  const root = spans.find((s) => !s.parentSpanContext);
  if (root) walk(root);
  return path;
}

/**
 * Each span's own time (its duration not covered by its children, clipped to it) summed over the
 * spans sent, ÷ the wall time from the first start to the last end: `Trace.concurrency`, computed
 * here from the spans with one sweep over each span's children.
 */
export function expectedConcurrency(spans: ReadableSpan[]): number {
  let own = 0;
  for (const span of spans) {
    const from = startNs(span);
    const to = endNs(span);
    const kids = spans
      .filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId)
      .map((s) => [Math.max(startNs(s), from), Math.min(endNs(s), to)] as const)
      .filter(([a, b]) => b > a)
      .sort((x, y) => x[0] - y[0]);
    let covered = 0;
    let runEnd = -Infinity;
    for (const [a, b] of kids) {
      if (a >= runEnd) covered += b - a;
      else if (b > runEnd) covered += b - runEnd;
      runEnd = Math.max(runEnd, b);
    }
    own += to - from - covered;
  }
  const wall = Math.max(...spans.map(endNs)) - Math.min(...spans.map(startNs));
  return wall > 0 ? own / wall : 1;
}
