import { SpanKind } from '@spanforge/otlp';
import { contractTotals, decodedSpan, PARENT } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';

// Vercel AI SDK (vercel/ai): legacy ai.* spans (LegacyOpenTelemetry, and everything before v7),
// tracer name 'ai', and the v7 GenAI integration (@ai-sdk/otel OpenTelemetry), whose default tracer
// is 'gen_ai'.

const functionId = 'support-chat';
const common = {
  'resource.name': functionId,
  'ai.telemetry.functionId': functionId,
  'ai.settings.maxRetries': 2,
  'ai.telemetry.metadata.sessionId': 'chat-42',
  'ai.telemetry.metadata.userId': 'u-9',
};

describe('normalizeSpan: Vercel AI SDK legacy spans', () => {
  const generateText = (parentSpanId: string): ReturnType<typeof decodedSpan> =>
    decodedSpan({
      name: 'ai.generateText',
      parentSpanId,
      scope: 'ai',
      attributes: {
        ...common,
        'operation.name': `ai.generateText ${functionId}`,
        'ai.operationId': 'ai.generateText',
        'ai.model.id': 'gpt-4o-mini',
        'ai.model.provider': 'openai.chat',
        'ai.prompt': JSON.stringify({ system: 'You answer support questions.', prompt: 'Where is my order?' }),
        'ai.response.text': 'It ships tomorrow.',
        'ai.response.finishReason': 'stop',
        'ai.usage.promptTokens': 1_900,
        'ai.usage.completionTokens': 240,
      },
    });

  it('makes the root ai.generateText wrapper the RUN and its usage an aggregate', () => {
    const n = normalizeSpan(generateText(''));
    expect(n).toMatchObject({
      spanType: 'RUN',
      convention: 'vercel_ai',
      operation: 'ai.generateText',
      usageIsAggregate: true,
      provider: 'openai',
      sessionId: 'chat-42',
      userId: 'u-9',
    });
    expect(JSON.parse(n.input)).toEqual({ system: 'You answer support questions.', prompt: 'Where is my order?' });
    expect(n.output).toBe('It ships tomorrow.');
  });

  it('keeps a nested ai.generateText wrapper a CHAIN', () => {
    expect(normalizeSpan(generateText(PARENT))).toMatchObject({ spanType: 'CHAIN', usageIsAggregate: true });
  });

  const v5OpenAi = { input: 1_900, cached: 1_280, output: 240, reasoning: 0 };
  const toolCalls = [{ toolCallType: 'function', toolCallId: 'call_1', toolName: 'getOrder', args: '{"id":"A-1"}' }];

  it('reads a v5 OpenAI doGenerate span: LLM, response model, inclusive cached input, text and tool calls out', () => {
    const span = decodedSpan({
      name: 'ai.generateText.doGenerate',
      parentSpanId: PARENT,
      kind: SpanKind.CLIENT,
      scope: 'ai',
      attributes: {
        ...common,
        'operation.name': `ai.generateText.doGenerate ${functionId}`,
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'gpt-4o-mini',
        'ai.model.provider': 'openai.chat',
        'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Where is my order?' }] }]),
        'ai.prompt.tools': [JSON.stringify({ type: 'function', name: 'getOrder' })],
        'ai.response.text': 'Let me check.',
        'ai.response.toolCalls': JSON.stringify(toolCalls),
        'ai.response.finishReason': 'tool-calls',
        'ai.response.model': 'gpt-4o-mini-2024-07-18',
        'ai.usage.inputTokens': v5OpenAi.input,
        'ai.usage.outputTokens': v5OpenAi.output,
        'ai.usage.totalTokens': v5OpenAi.input + v5OpenAi.output,
        'ai.usage.cachedInputTokens': v5OpenAi.cached,
        'gen_ai.system': 'openai.chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.usage.input_tokens': v5OpenAi.input,
        'gen_ai.usage.output_tokens': v5OpenAi.output,
      },
    });
    const n = normalizeSpan(span);
    expect(n).toMatchObject({
      spanType: 'LLM',
      convention: 'vercel_ai',
      provider: 'openai',
      model: 'gpt-4o-mini-2024-07-18',
      modelRequested: 'gpt-4o-mini',
      usageIsAggregate: false,
    });
    expect(n.usage).toEqual({
      inputUncached: v5OpenAi.input - v5OpenAi.cached,
      cacheRead: v5OpenAi.cached,
      cacheWrite: 0,
      output: v5OpenAi.output,
      reasoning: 0,
    });
    expect(JSON.parse(n.output)).toEqual({ text: 'Let me check.', toolCalls });
    expect(JSON.parse(n.input)).toHaveLength(1);
    expect(n.attributes['ai.prompt.tools']).toBeDefined(); // tool definitions are not message content
  });

  it('reads v4/v5 Anthropic counts as exclusive, with cache writes from the provider metadata', () => {
    const raw = { input: 12, cacheRead: 3_000, cacheWrite: 500, output: 300 };
    const v5 = decodedSpan({
      name: 'ai.streamText.doStream',
      parentSpanId: PARENT,
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.streamText.doStream',
        'ai.model.id': 'claude-3-5-haiku-latest',
        'ai.model.provider': 'anthropic.messages',
        'ai.usage.inputTokens': raw.input,
        'ai.usage.outputTokens': raw.output,
        'ai.usage.cachedInputTokens': raw.cacheRead,
        'ai.response.providerMetadata': JSON.stringify({ anthropic: { cacheCreationInputTokens: raw.cacheWrite } }),
        'ai.response.msToFirstChunk': 409.7,
      },
      events: [{ name: 'ai.stream.firstChunk', atMs: 410, attributes: { 'ai.response.msToFirstChunk': 409.7 } }],
    });
    const n = normalizeSpan(v5);
    expect(n.usage).toEqual({
      inputUncached: raw.input,
      cacheRead: raw.cacheRead,
      cacheWrite: raw.cacheWrite,
      output: raw.output,
      reasoning: 0,
    });
    expect(contractTotals(n.usage).inputTokens).toBe(raw.input + raw.cacheRead + raw.cacheWrite);
    expect(n).toMatchObject({ provider: 'anthropic', spanType: 'LLM', ttftMs: 409.7 });

    const v4 = decodedSpan({
      name: 'ai.generateText.doGenerate',
      parentSpanId: PARENT,
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.provider': 'anthropic.messages',
        'ai.model.id': 'claude-3-5-sonnet-20241022',
        'ai.usage.promptTokens': raw.input,
        'ai.usage.completionTokens': raw.output,
        'ai.response.providerMetadata': JSON.stringify({
          anthropic: { cacheCreationInputTokens: raw.cacheWrite, cacheReadInputTokens: raw.cacheRead },
        }),
      },
    });
    expect(normalizeSpan(v4).usage).toEqual(n.usage);
  });

  it('reads v6 input token details as exclusive buckets, reasoning from the output details', () => {
    const detail = { noCache: 40, cacheRead: 2_048, cacheWrite: 0, text: 260, reasoning: 512 };
    const span = decodedSpan({
      name: 'ai.generateText.doGenerate',
      parentSpanId: PARENT,
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.provider': 'openai.responses',
        'ai.model.id': 'o4-mini',
        'ai.usage.inputTokens': detail.noCache + detail.cacheRead + detail.cacheWrite,
        'ai.usage.outputTokens': detail.text + detail.reasoning,
        'ai.usage.cachedInputTokens': detail.cacheRead,
        'ai.usage.reasoningTokens': detail.reasoning,
        'ai.usage.inputTokenDetails.noCacheTokens': detail.noCache,
        'ai.usage.inputTokenDetails.cacheReadTokens': detail.cacheRead,
        'ai.usage.inputTokenDetails.cacheWriteTokens': detail.cacheWrite,
        'ai.usage.outputTokenDetails.textTokens': detail.text,
        'ai.usage.outputTokenDetails.reasoningTokens': detail.reasoning,
      },
    });
    expect(normalizeSpan(span).usage).toEqual({
      inputUncached: detail.noCache,
      cacheRead: detail.cacheRead,
      cacheWrite: detail.cacheWrite,
      output: detail.text,
      reasoning: detail.reasoning,
    });
  });

  it('reads ai.toolCall spans', () => {
    const span = decodedSpan({
      name: 'ai.toolCall',
      parentSpanId: PARENT,
      attributes: {
        'operation.name': 'ai.toolCall',
        'ai.operationId': 'ai.toolCall',
        'ai.toolCall.name': 'getOrder',
        'ai.toolCall.id': 'call_1',
        'ai.toolCall.args': '{"id":"A-1"}',
        'ai.toolCall.result': '{"status":"shipped"}',
      },
    });
    const n = normalizeSpan(span);
    expect(n).toMatchObject({ spanType: 'TOOL', toolName: 'getOrder', input: '{"id":"A-1"}', output: '{"status":"shipped"}' });
    expect(n.attributes).toEqual({
      'operation.name': 'ai.toolCall',
      'ai.operationId': 'ai.toolCall',
      'ai.toolCall.name': 'getOrder',
      'ai.toolCall.id': 'call_1',
    });
  });

  it('types embed wrappers CHAIN and their doEmbed calls EMBEDDING', () => {
    const wrapper = normalizeSpan(
      decodedSpan({ name: 'ai.embedMany', parentSpanId: PARENT, attributes: { 'ai.operationId': 'ai.embedMany', 'ai.usage.tokens': 64 } }),
    );
    expect(wrapper).toMatchObject({ spanType: 'CHAIN', usageIsAggregate: true });
    const call = normalizeSpan(
      decodedSpan({
        name: 'ai.embedMany.doEmbed',
        parentSpanId: PARENT,
        attributes: { 'ai.operationId': 'ai.embedMany.doEmbed', 'ai.model.id': 'text-embedding-3-small', 'ai.usage.tokens': 64 },
      }),
    );
    expect(call).toMatchObject({ spanType: 'EMBEDDING', usageIsAggregate: false, provider: 'openai' });
    expect(call.usage.inputUncached).toBe(64);
  });
});

describe('normalizeSpan: Vercel AI SDK v7 GenAI spans', () => {
  const v7 = { input: 6_200, cacheRead: 4_096, cacheWrite: 1_024, output: 310 };

  it('makes the root invoke_agent the RUN and the step spans AGENT, both aggregates', () => {
    const usage = { 'gen_ai.usage.input_tokens': v7.input, 'gen_ai.usage.output_tokens': v7.output };
    const root = normalizeSpan(
      decodedSpan({
        name: 'invoke_agent gpt-4o',
        scope: 'ai',
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.agent.name': functionId,
          ...usage,
        },
      }),
    );
    expect(root).toMatchObject({ spanType: 'RUN', agentName: functionId, usageIsAggregate: true });
    const step = normalizeSpan(
      decodedSpan({ name: 'step 1', parentSpanId: PARENT, scope: 'ai', attributes: { 'gen_ai.operation.name': 'agent_step', ...usage } }),
    );
    expect(step).toMatchObject({ spanType: 'AGENT', operation: 'agent_step', usageIsAggregate: true });
  });

  it('reads the chat span: inclusive GenAI usage with cache, TTFT in seconds', () => {
    const span = decodedSpan({
      name: 'chat gpt-4o',
      parentSpanId: PARENT,
      kind: SpanKind.CLIENT,
      scope: 'ai',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-11-20',
        'gen_ai.usage.input_tokens': v7.input,
        'gen_ai.usage.output_tokens': v7.output,
        'gen_ai.usage.cache_read.input_tokens': v7.cacheRead,
        'gen_ai.usage.cache_creation.input_tokens': v7.cacheWrite,
        'gen_ai.client.operation.duration': 2.4,
        'gen_ai.client.operation.time_to_first_chunk': 0.35,
      },
    });
    const n = normalizeSpan(span);
    expect(n.usage).toEqual({
      inputUncached: v7.input - v7.cacheRead - v7.cacheWrite,
      cacheRead: v7.cacheRead,
      cacheWrite: v7.cacheWrite,
      output: v7.output,
      reasoning: 0,
    });
    expect(n.ttftMs).toBeCloseTo(350, 6);
    expect(n.spanType).toBe('LLM');
  });

  it('reads the chat span with the supplemental usage details (usage: true): cache reads come from the GenAI counts', () => {
    // @ai-sdk/otel 1.0 with `new OpenTelemetry({ usage: true })`, as it reports an OpenAI call with a cache hit.
    const usage = { input: 89, cacheRead: 32, output: 10, reasoning: 0 };
    const span = decodedSpan({
      name: 'chat gpt-4o-mini',
      parentSpanId: PARENT,
      kind: SpanKind.CLIENT,
      scope: 'gen_ai',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.usage.input_tokens': usage.input,
        'gen_ai.usage.output_tokens': usage.output,
        'gen_ai.usage.cache_read.input_tokens': usage.cacheRead,
        'ai.usage.inputTokenDetails.noCacheTokens': usage.input - usage.cacheRead,
        'ai.usage.outputTokenDetails.textTokens': usage.output - usage.reasoning,
        'ai.usage.outputTokenDetails.reasoningTokens': usage.reasoning,
      },
    });
    const n = normalizeSpan(span);
    expect(n.usage).toEqual({
      inputUncached: usage.input - usage.cacheRead,
      cacheRead: usage.cacheRead,
      cacheWrite: 0,
      output: usage.output,
      reasoning: 0,
    });
    expect(contractTotals(n.usage)).toEqual({ inputTokens: usage.input, outputTokens: usage.output });
  });

  it('takes no usage from a step span that carries only the supplemental details (they leave out cache reads)', () => {
    const step = normalizeSpan(
      decodedSpan({
        name: 'step 2',
        parentSpanId: PARENT,
        scope: 'gen_ai',
        attributes: {
          'gen_ai.operation.name': 'agent_step',
          'ai.usage.inputTokenDetails.noCacheTokens': 57,
          'ai.usage.outputTokenDetails.textTokens': 10,
          'ai.usage.outputTokenDetails.reasoningTokens': 0,
        },
      }),
    );
    expect(step).toMatchObject({ spanType: 'AGENT', usageIsAggregate: false });
    expect(step.usage).toEqual({ inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  });

  it('splits reasoning out of the GenAI output count with the supplemental reasoning detail', () => {
    const span = decodedSpan({
      name: 'chat o4-mini',
      parentSpanId: PARENT,
      scope: 'gen_ai',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'o4-mini',
        'gen_ai.usage.input_tokens': 500,
        'gen_ai.usage.output_tokens': 900,
        'ai.usage.inputTokenDetails.noCacheTokens': 500,
        'ai.usage.outputTokenDetails.textTokens': 260,
        'ai.usage.outputTokenDetails.reasoningTokens': 640,
      },
    });
    expect(normalizeSpan(span).usage).toEqual({ inputUncached: 500, cacheRead: 0, cacheWrite: 0, output: 260, reasoning: 640 });
  });

  it('takes the session, user and run ids from the runtime context the application let through', () => {
    // generateText({ runtimeContext: { sessionId, userId, runId }, telemetry: { includeRuntimeContext: {...} } })
    // with `new OpenTelemetry({ runtimeContext: true })`: on the invoke_agent and step spans.
    const root = normalizeSpan(
      decodedSpan({
        name: 'invoke_agent gpt-4o-mini',
        scope: 'gen_ai',
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.request.model': 'gpt-4o-mini',
          'ai.settings.context.sessionId': 'chat-7',
          'ai.settings.context.userId': 'u-3',
          'ai.settings.context.runId': 'run-1',
        },
      }),
    );
    expect({ sessionId: root.sessionId, userId: root.userId, runId: root.runId }).toEqual({
      sessionId: 'chat-7',
      userId: 'u-3',
      runId: 'run-1',
    });
  });

  it('types a rerank root span RERANK (a model call is never upgraded to RUN)', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'rerank rerank-v3.5',
        scope: 'ai',
        attributes: { 'gen_ai.operation.name': 'rerank', 'gen_ai.provider.name': 'cohere', 'gen_ai.request.model': 'rerank-v3.5' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'RERANK', provider: 'cohere' });
  });
});
