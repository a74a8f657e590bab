import { SpanKind } from '@spanforge/otlp';
import { contractTotals, decodedSpan, PARENT } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';

// OpenLLMetry / Traceloop (traceloop/openllmetry). The Anthropic instrumentation names the span
// anthropic.chat, sets gen_ai.system "Anthropic" and llm.request.type "completion", and reports
// input = input_tokens + cache_read + cache_creation (opentelemetry-instrumentation-anthropic
// _set_token_usage, since #2175), with the semconv-ai <= 0.4 attribute names.

const raw = { inputTokens: 14, cacheRead: 20_480, cacheCreation: 1_200, outputTokens: 388 };
const reportedInput = raw.inputTokens + raw.cacheRead + raw.cacheCreation;

const anthropicChat = (): ReturnType<typeof decodedSpan> =>
  decodedSpan({
    name: 'anthropic.chat',
    parentSpanId: PARENT,
    kind: SpanKind.CLIENT,
    scope: 'opentelemetry.instrumentation.anthropic',
    attributes: {
      'gen_ai.system': 'Anthropic',
      'llm.request.type': 'completion',
      'gen_ai.request.model': 'claude-3-7-sonnet-latest',
      'gen_ai.response.model': 'claude-3-7-sonnet-20250219',
      'gen_ai.request.max_tokens': 2048,
      'gen_ai.usage.prompt_tokens': reportedInput,
      'gen_ai.usage.completion_tokens': raw.outputTokens,
      'llm.usage.total_tokens': reportedInput + raw.outputTokens,
      'gen_ai.usage.cache_read_input_tokens': raw.cacheRead,
      'gen_ai.usage.cache_creation_input_tokens': raw.cacheCreation,
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'Draft a reply to the refund request.',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Hi Dana, your refund was issued today.',
      'gen_ai.completion.0.finish_reason': 'end_turn',
      'traceloop.association.properties.session_id': 'thread-88',
      'traceloop.association.properties.user_id': 'dana',
      'traceloop.workflow.name': 'support_reply',
    },
  });

describe('normalizeSpan: OpenLLMetry Anthropic chat span', () => {
  it('types it from llm.request.type, with the canonical provider from "Anthropic"', () => {
    const n = normalizeSpan(anthropicChat());
    expect(n).toMatchObject({ spanType: 'LLM', convention: 'openllmetry', operation: 'completion', provider: 'anthropic' });
    expect(n.model).toBe('claude-3-7-sonnet-20250219');
    expect(n.modelRequested).toBe('claude-3-7-sonnet-latest');
  });

  it('reads its input count as inclusive of the cache counts beside it', () => {
    const { usage } = normalizeSpan(anthropicChat());
    expect(usage).toEqual({
      inputUncached: reportedInput - raw.cacheRead - raw.cacheCreation,
      cacheRead: raw.cacheRead,
      cacheWrite: raw.cacheCreation,
      output: raw.outputTokens,
      reasoning: 0,
    });
    expect(usage.inputUncached).toBe(raw.inputTokens);
    expect(contractTotals(usage)).toEqual({ inputTokens: reportedInput, outputTokens: raw.outputTokens });
  });

  it('rebuilds the flattened prompt and completion and takes the association properties as ids', () => {
    const n = normalizeSpan(anthropicChat());
    expect(JSON.parse(n.input)).toEqual([{ role: 'user', content: 'Draft a reply to the refund request.' }]);
    expect(JSON.parse(n.output)).toEqual([
      { role: 'assistant', content: 'Hi Dana, your refund was issued today.', finish_reason: 'end_turn' },
    ]);
    expect(Object.keys(n.attributes).some((key) => key.startsWith('gen_ai.prompt.') || key.startsWith('gen_ai.completion.'))).toBe(false);
    expect(n).toMatchObject({ sessionId: 'thread-88', userId: 'dana' });
  });

  it('ignores a framework name in gen_ai.system and infers the provider from the model', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'ChatOpenAI.chat',
        parentSpanId: PARENT,
        attributes: { 'gen_ai.system': 'Langchain', 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4.1-mini' },
      }),
    );
    expect(n.provider).toBe('openai');
  });
});

describe('normalizeSpan: OpenLLMetry streamed chat span', () => {
  // opentelemetry-instrumentation-openai chat_wrappers.py: one event per received chunk, no first-token
  // attribute; the event name is SpanAttributes.LLM_CONTENT_COMPLETION_CHUNK, whose value changed.
  const chunks = [412.25, 431.5, 450.75];
  const streamed = (eventName: string, order: readonly number[] = chunks): ReturnType<typeof decodedSpan> =>
    decodedSpan({
      name: 'openai.chat',
      parentSpanId: PARENT,
      kind: SpanKind.CLIENT,
      scope: 'opentelemetry.instrumentation.openai.v1',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.system': 'openai',
        'llm.is_streaming': true,
        'gen_ai.request.model': 'gpt-4o-mini',
      },
      events: order.map((atMs) => ({ name: eventName, atMs })),
    });

  it.each(['gen_ai.content.completion.chunk', 'llm.content.completion.chunk', 'gen_ai.completion.chunk'])(
    'measures TTFT from the first %s event',
    (eventName) => {
      expect(normalizeSpan(streamed(eventName)).ttftMs).toBeCloseTo(Math.min(...chunks), 6);
    },
  );

  it('takes the earliest chunk when the events are not in time order', () => {
    expect(normalizeSpan(streamed('gen_ai.content.completion.chunk', [...chunks].reverse())).ttftMs).toBeCloseTo(Math.min(...chunks), 6);
  });

  it('has no TTFT without chunk events, and prefers a first-token event to the chunks', () => {
    expect(normalizeSpan(streamed('gen_ai.content.completion.chunk', [])).ttftMs).toBeUndefined();
    const both = streamed('gen_ai.content.completion.chunk');
    both.events.push({ ...both.events[0], name: 'gen_ai.first_token', timeUnixNano: both.startTimeUnixNano + 300_000_000n });
    expect(normalizeSpan(both).ttftMs).toBeCloseTo(300, 6);
  });
});

describe('normalizeSpan: OpenLLMetry workflow, task, agent and tool spans', () => {
  const workflow = (parentSpanId: string): ReturnType<typeof decodedSpan> =>
    decodedSpan({
      name: 'support_reply.workflow',
      parentSpanId,
      scope: 'traceloop.tracer',
      attributes: {
        'traceloop.span.kind': 'workflow',
        'traceloop.workflow.name': 'support_reply',
        'traceloop.entity.name': 'support_reply',
        'traceloop.entity.input': JSON.stringify({ args: ['refund'], kwargs: {} }),
        'traceloop.entity.output': '"done"',
      },
    });

  it('makes the root workflow the RUN and moves the entity input and output', () => {
    const n = normalizeSpan(workflow(''));
    expect(n).toMatchObject({ spanType: 'RUN', convention: 'openllmetry', operation: 'workflow', output: '"done"' });
    expect(JSON.parse(n.input)).toEqual({ args: ['refund'], kwargs: {} });
    expect(n.attributes).not.toHaveProperty(['traceloop.entity.input']);
  });

  it('keeps a nested workflow a CHAIN', () => {
    expect(normalizeSpan(workflow(PARENT)).spanType).toBe('CHAIN');
  });

  it('names tools and agents after their entity', () => {
    const tool = normalizeSpan(
      decodedSpan({
        name: 'lookup_order.tool',
        parentSpanId: PARENT,
        attributes: { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'lookup_order' },
      }),
    );
    expect(tool).toMatchObject({ spanType: 'TOOL', toolName: 'lookup_order' });
    const agent = normalizeSpan(
      decodedSpan({
        name: 'triage.agent',
        parentSpanId: PARENT,
        attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'triage' },
      }),
    );
    expect(agent).toMatchObject({ spanType: 'AGENT', agentName: 'triage' });
    const task = normalizeSpan(decodedSpan({ name: 'classify.task', parentSpanId: PARENT, attributes: { 'traceloop.span.kind': 'task' } }));
    expect(task.spanType).toBe('CHAIN');
  });

  it('types embedding and rerank requests', () => {
    expect(
      normalizeSpan(decodedSpan({ name: 'openai.embeddings', parentSpanId: PARENT, attributes: { 'llm.request.type': 'embedding' } }))
        .spanType,
    ).toBe('EMBEDDING');
    expect(
      normalizeSpan(decodedSpan({ name: 'cohere.rerank', parentSpanId: PARENT, attributes: { 'llm.request.type': 'rerank' } })).spanType,
    ).toBe('RERANK');
  });
});
