import { SpanKind } from '@spanforge/otlp';
import { contractTotals, decodedSpan, PARENT } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';

// OpenInference (Arize-ai/openinference), as openinference-instrumentation-anthropic emits an LLM
// span with prompt caching: llm.token_count.prompt = input_tokens + cache_creation + cache_read
// (its _utils.py).

const anthropicUsage = { uncached: 88, cacheRead: 4_096, cacheWrite: 512, completion: 311 };
const prompt = anthropicUsage.uncached + anthropicUsage.cacheRead + anthropicUsage.cacheWrite;
const request = { model: 'claude-3-5-sonnet-20241022', max_tokens: 1024, messages: [{ role: 'user', content: 'Summarise the ticket' }] };

const llmSpan = (): ReturnType<typeof decodedSpan> =>
  decodedSpan({
    name: 'Messages',
    parentSpanId: PARENT,
    kind: SpanKind.INTERNAL,
    scope: 'openinference.instrumentation.anthropic',
    attributes: {
      'openinference.span.kind': 'LLM',
      'llm.provider': 'anthropic',
      'llm.system': 'anthropic',
      'llm.model_name': 'claude-3-5-sonnet-20241022',
      'llm.invocation_parameters': JSON.stringify({ max_tokens: 1024 }),
      'input.value': JSON.stringify(request),
      'input.mime_type': 'application/json',
      'output.value': 'The customer cannot log in since the update.',
      'output.mime_type': 'text/plain',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Summarise the ticket',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'The customer cannot log in since the update.',
      'llm.token_count.prompt': prompt,
      'llm.token_count.completion': anthropicUsage.completion,
      'llm.token_count.total': prompt + anthropicUsage.completion,
      'llm.token_count.prompt_details.cache_read': anthropicUsage.cacheRead,
      'llm.token_count.prompt_details.cache_write': anthropicUsage.cacheWrite,
      'session.id': 'sess-204',
      'user.id': 'agent-ops@example.com',
    },
  });

describe('normalizeSpan: OpenInference LLM span', () => {
  it('types it from openinference.span.kind and reads the model and provider', () => {
    const n = normalizeSpan(llmSpan());
    expect(n).toMatchObject({ spanType: 'LLM', convention: 'openinference', operation: 'LLM', provider: 'anthropic' });
    expect(n.model).toBe('claude-3-5-sonnet-20241022');
    expect(n.modelRequested).toBe('claude-3-5-sonnet-20241022');
    expect(n.pricingModel).toBe('claude-3-5-sonnet-20241022');
  });

  it('reads llm.token_count.prompt as inclusive of cache reads and writes', () => {
    const { usage } = normalizeSpan(llmSpan());
    expect(usage).toEqual({
      inputUncached: prompt - anthropicUsage.cacheRead - anthropicUsage.cacheWrite,
      cacheRead: anthropicUsage.cacheRead,
      cacheWrite: anthropicUsage.cacheWrite,
      output: anthropicUsage.completion,
      reasoning: 0,
    });
    expect(contractTotals(usage)).toEqual({ inputTokens: prompt, outputTokens: anthropicUsage.completion });
  });

  it('keeps input.value as the input and removes the flattened messages too', () => {
    const n = normalizeSpan(llmSpan());
    expect(JSON.parse(n.input)).toEqual(request);
    expect(n.output).toBe('The customer cannot log in since the update.');
    expect(
      Object.keys(n.attributes).filter(
        (key) => key.startsWith('llm.input_messages') || key.startsWith('llm.output_messages') || key.endsWith('.value'),
      ),
    ).toEqual([]);
    expect(n.attributes['llm.token_count.prompt']).toBe(prompt);
    expect(n.sessionId).toBe('sess-204');
    expect(n.userId).toBe('agent-ops@example.com');
  });

  it('rebuilds the messages from flattened keys when there is no input.value', () => {
    const span = decodedSpan({
      name: 'ChatOpenAI',
      parentSpanId: PARENT,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        'llm.input_messages.0.message.role': 'system',
        'llm.input_messages.0.message.content': 'Be brief.',
        'llm.input_messages.1.message.role': 'user',
        'llm.input_messages.1.message.contents.0.message_content.type': 'text',
        'llm.input_messages.1.message.contents.0.message_content.text': 'Weather in Oslo?',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Oslo"}',
      },
    });
    const n = normalizeSpan(span);
    expect(JSON.parse(n.input)).toEqual([
      { message: { role: 'system', content: 'Be brief.' } },
      { message: { role: 'user', contents: [{ message_content: { type: 'text', text: 'Weather in Oslo?' } }] } },
    ]);
    expect(JSON.parse(n.output)).toEqual([
      { message: { role: 'assistant', tool_calls: [{ tool_call: { function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } } }] } },
    ]);
    expect(n.attributes).toEqual({ 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini' });
    expect(n.provider).toBe('openai');
  });

  it('names Azure-hosted OpenAI by its host, and takes a stated cost', () => {
    const span = decodedSpan({
      name: 'ChatCompletion',
      parentSpanId: PARENT,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.provider': 'azure',
        'llm.system': 'openai',
        'llm.model_name': 'gpt-4o',
        'llm.token_count.prompt': 10,
        'llm.cost.total': 0.0021,
      },
    });
    const n = normalizeSpan(span);
    expect(n.provider).toBe('azure_openai');
    expect(n.explicitCostUsd).toBe(0.0021);
  });

  it('measures TTFT from the LangChain "First Token Stream Event"', () => {
    const span = decodedSpan({
      name: 'ChatAnthropic',
      parentSpanId: PARENT,
      attributes: { 'openinference.span.kind': 'LLM' },
      events: [{ name: 'First Token Stream Event', atMs: 612.5 }],
    });
    expect(normalizeSpan(span).ttftMs).toBeCloseTo(612.5, 6);
  });
});

describe('normalizeSpan: OpenInference agent, chain and other kinds', () => {
  it('marks token counts on AGENT and CHAIN spans as aggregates', () => {
    const agent = normalizeSpan(
      decodedSpan({
        name: 'agent',
        parentSpanId: PARENT,
        attributes: {
          'openinference.span.kind': 'AGENT',
          'agent.name': 'researcher',
          'llm.token_count.prompt': 5_000,
          'llm.token_count.completion': 700,
        },
      }),
    );
    expect(agent).toMatchObject({ spanType: 'AGENT', agentName: 'researcher', usageIsAggregate: true });
    const chain = normalizeSpan(
      decodedSpan({
        name: 'RunnableSequence',
        parentSpanId: PARENT,
        attributes: { 'openinference.span.kind': 'CHAIN', 'llm.token_count.total': 5_700 },
      }),
    );
    expect(chain).toMatchObject({ spanType: 'CHAIN', usageIsAggregate: false }); // a total alone cannot be split: no usage at all
  });

  it('makes a root CHAIN span the RUN', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'LangGraph',
        scope: 'openinference.instrumentation.langchain',
        attributes: { 'openinference.span.kind': 'CHAIN', 'input.value': 'hi' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'RUN', convention: 'openinference', input: 'hi' });
  });

  it.each([
    ['RETRIEVER', 'RETRIEVAL'],
    ['EMBEDDING', 'EMBEDDING'],
    ['RERANKER', 'RERANK'],
    ['GUARDRAIL', 'GUARDRAIL'],
    ['EVALUATOR', 'EVALUATION'],
    ['PROMPT', 'CHAIN'],
    ['tool', 'TOOL'],
  ])('maps span kind %s to %s', (kind, spanType) => {
    expect(normalizeSpan(decodedSpan({ name: kind, parentSpanId: PARENT, attributes: { 'openinference.span.kind': kind } })).spanType).toBe(
      spanType,
    );
  });

  it('names a TOOL span without tool.name after the span, as openinference-core traceTool names it', () => {
    const tool = normalizeSpan(
      decodedSpan({
        name: 'weather',
        parentSpanId: PARENT,
        scope: 'openinference-core',
        attributes: { 'openinference.span.kind': 'TOOL', 'input.value': '{"city":"Porto"}', 'output.value': '{"celsius":21}' },
      }),
    );
    expect(tool).toMatchObject({ spanType: 'TOOL', toolName: 'weather', input: '{"city":"Porto"}', output: '{"celsius":21}' });
    const named = decodedSpan({
      name: 'call tool',
      parentSpanId: PARENT,
      attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup' },
    });
    expect(normalizeSpan(named).toolName).toBe('lookup');
  });

  it('reads the embedding model of an EMBEDDING span', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'embed',
        parentSpanId: PARENT,
        attributes: {
          'openinference.span.kind': 'EMBEDDING',
          'embedding.model_name': 'text-embedding-3-small',
          'llm.token_count.prompt': 42,
        },
      }),
    );
    expect(n).toMatchObject({ model: 'text-embedding-3-small', provider: 'openai', usageIsAggregate: false });
    expect(n.usage.inputUncached).toBe(42);
  });
});
