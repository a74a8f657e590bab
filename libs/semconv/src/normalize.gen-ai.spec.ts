import { SpanKind, StatusCode } from '@spanforge/otlp';
import { contractTotals, decodedSpan, PARENT, snapshot } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';

// OTel GenAI semantic conventions, as the Python openai-v2 instrumentation and the newest
// open-telemetry/semantic-conventions-genai emit them.

const messages = [{ role: 'user', parts: [{ type: 'text', content: 'Find me a flight to Lisbon on Friday' }] }];
const instructions = [{ type: 'text', content: 'You are a travel agent.' }];
const answer = [{ role: 'assistant', parts: [{ type: 'text', content: 'TP1351 leaves at 09:40.' }], finish_reason: 'stop' }];

const chatUsage = { input: 1_830, cacheRead: 1_024, cacheWrite: 256, output: 412 };

const chatSpan = (): ReturnType<typeof decodedSpan> =>
  decodedSpan({
    name: 'chat gpt-4o',
    parentSpanId: PARENT,
    kind: SpanKind.CLIENT,
    scope: 'opentelemetry.instrumentation.openai_v2',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.response.id': 'chatcmpl-9x7',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': chatUsage.input,
      'gen_ai.usage.cache_read.input_tokens': chatUsage.cacheRead,
      'gen_ai.usage.cache_creation.input_tokens': chatUsage.cacheWrite,
      'gen_ai.usage.output_tokens': chatUsage.output,
      'gen_ai.response.time_to_first_chunk': 0.318,
      'gen_ai.conversation.id': 'conv-5521',
      'gen_ai.system_instructions': JSON.stringify(instructions),
      'gen_ai.input.messages': JSON.stringify(messages),
      'gen_ai.output.messages': JSON.stringify(answer),
      'server.address': 'api.openai.com',
      'server.port': 443,
    },
  });

describe('normalizeSpan: OTel GenAI inference span', () => {
  it('types it LLM and reads model, provider and the operation', () => {
    const n = normalizeSpan(chatSpan());
    expect(n).toMatchObject({ spanType: 'LLM', convention: 'gen_ai', operation: 'chat', provider: 'openai', drop: false });
    expect(n.model).toBe('gpt-4o-2024-08-06');
    expect(n.modelRequested).toBe('gpt-4o');
    expect(n.pricingModel).toBe('gpt-4o-2024-08-06');
  });

  it('splits inclusive input into exclusive buckets that add back up to the reported totals', () => {
    const { usage, usageIsAggregate } = normalizeSpan(chatSpan());
    expect(usage).toEqual({
      inputUncached: chatUsage.input - chatUsage.cacheRead - chatUsage.cacheWrite,
      cacheRead: chatUsage.cacheRead,
      cacheWrite: chatUsage.cacheWrite,
      output: chatUsage.output,
      reasoning: 0,
    });
    expect(contractTotals(usage)).toEqual({ inputTokens: chatUsage.input, outputTokens: chatUsage.output });
    expect(usageIsAggregate).toBe(false);
  });

  it('takes time to first chunk from seconds, and the session from gen_ai.conversation.id', () => {
    const n = normalizeSpan(chatSpan());
    expect(n.ttftMs).toBeCloseTo(318, 6);
    expect(n.sessionId).toBe('conv-5521');
  });

  it('moves the messages out of the attributes, system instructions first, and leaves its input alone', () => {
    const span = chatSpan();
    const before = snapshot(span.attributes);
    const n = normalizeSpan(span);
    expect(JSON.parse(n.input)).toEqual([{ role: 'system', parts: instructions }, ...messages]);
    expect(JSON.parse(n.output)).toEqual(answer);
    for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions'])
      expect(n.attributes).not.toHaveProperty([key]);
    expect(n.attributes['server.address']).toBe('api.openai.com');
    expect(span.attributes).toEqual(before);
  });

  it('reads reasoning as part of output_tokens', () => {
    const output = 2_300;
    const reasoning = 1_792;
    const span = decodedSpan({
      name: 'chat o3-mini',
      parentSpanId: PARENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'o3-mini',
        'gen_ai.usage.input_tokens': 640,
        'gen_ai.usage.output_tokens': output,
        'gen_ai.usage.reasoning.output_tokens': reasoning,
      },
    });
    const n = normalizeSpan(span);
    expect(n.usage).toMatchObject({ output: output - reasoning, reasoning });
    expect(contractTotals(n.usage).outputTokens).toBe(output);
    expect(n.provider).toBe('openai'); // no provider attribute: inferred from the model family
  });

  it('accepts deprecated names: gen_ai.system values, prompt/completion tokens, cache_write', () => {
    const span = decodedSpan({
      name: 'chat',
      parentSpanId: PARENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'az.ai.openai',
        'gen_ai.request.model': 'my-gpt4o-deployment',
        'gen_ai.usage.prompt_tokens': 900,
        'gen_ai.usage.completion_tokens': 120,
        'gen_ai.usage.cache_write.input_tokens': 300,
      },
    });
    const n = normalizeSpan(span);
    expect(n.provider).toBe('azure_openai');
    expect(n.pricingModel).toBe('my-gpt4o-deployment');
    expect(n.usage).toMatchObject({ inputUncached: 900 - 300, cacheWrite: 300, output: 120 });
  });
});

describe('normalizeSpan: OTel GenAI agent and tool spans', () => {
  const agentAttributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'travel-planner',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'claude-sonnet-4-5',
    'gen_ai.usage.input_tokens': 8_120,
    'gen_ai.usage.output_tokens': 1_045,
    'agent.iterations': 3,
    'user.id': 'u-77',
  };

  it('makes the root invoke_agent span the RUN, its usage an aggregate of its children', () => {
    const n = normalizeSpan(
      decodedSpan({ name: 'invoke_agent travel-planner', scope: 'strands.telemetry.tracer', attributes: agentAttributes }),
    );
    expect(n).toMatchObject({
      spanType: 'RUN',
      convention: 'gen_ai',
      operation: 'invoke_agent',
      agentName: 'travel-planner',
      iterations: 3,
      userId: 'u-77',
    });
    expect(n.usageIsAggregate).toBe(true);
    expect(contractTotals(n.usage)).toEqual({ inputTokens: 8_120, outputTokens: 1_045 });
  });

  it('keeps a nested invoke_agent span AGENT, still an aggregate', () => {
    const n = normalizeSpan(decodedSpan({ name: 'invoke_agent travel-planner', parentSpanId: PARENT, attributes: agentAttributes }));
    expect(n.spanType).toBe('AGENT');
    expect(n.usageIsAggregate).toBe(true);
  });

  it('reads an execute_tool span: tool name, arguments in, result out', () => {
    const args = { city: 'Lisbon', date: '2025-07-18' };
    const result = { flights: ['TP1351'] };
    const span = decodedSpan({
      name: 'execute_tool search_flights',
      parentSpanId: PARENT,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search_flights',
        'gen_ai.tool.call.id': 'call_a1',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': JSON.stringify(args),
        'gen_ai.tool.call.result': JSON.stringify(result),
      },
    });
    const n = normalizeSpan(span);
    expect(n).toMatchObject({ spanType: 'TOOL', toolName: 'search_flights', usageIsAggregate: false });
    expect(JSON.parse(n.input)).toEqual(args);
    expect(JSON.parse(n.output)).toEqual(result);
    expect(n.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search_flights',
      'gen_ai.tool.call.id': 'call_a1',
      'gen_ai.tool.type': 'function',
    });
  });

  it.each([
    ['generate_content', 'LLM'],
    ['text_completion', 'LLM'],
    ['completion', 'LLM'],
    ['generate', 'LLM'],
    ['embeddings', 'EMBEDDING'],
    ['retrieval', 'RETRIEVAL'],
    ['search_memory', 'RETRIEVAL'],
    ['upsert_memory', 'TOOL'],
    ['create_agent', 'AGENT'],
    ['plan', 'AGENT'],
    ['agent_step', 'AGENT'],
    ['invoke_workflow', 'CHAIN'],
    ['handle_conversation_turn', 'RUN'],
    ['rerank', 'RERANK'],
    ['apply_guardrail', 'GUARDRAIL'],
    ['run_guardrail', 'GUARDRAIL'],
  ])('maps gen_ai.operation.name %s to %s', (operation, spanType) => {
    const n = normalizeSpan(decodedSpan({ name: operation, parentSpanId: PARENT, attributes: { 'gen_ai.operation.name': operation } }));
    expect(n.spanType).toBe(spanType);
    expect(n.operation).toBe(operation);
  });

  it('lets an unknown custom operation fall through to the next signals', () => {
    const n = normalizeSpan(decodedSpan({ name: 'x', parentSpanId: PARENT, attributes: { 'gen_ai.operation.name': 'summon_familiar' } }));
    expect(n).toMatchObject({ spanType: 'OTHER', convention: 'default' });
  });

  it('reads pydantic-ai v2 tool spans, which carry gen_ai.tool.name but no operation name', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'running tool',
        parentSpanId: PARENT,
        scope: 'pydantic-ai',
        attributes: { 'gen_ai.tool.name': 'roll_dice', tool_arguments: '{}' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'TOOL', convention: 'gen_ai', toolName: 'roll_dice' });
  });
});

describe('normalizeSpan: errors', () => {
  it('takes error.type, else the exception event type, only for failed spans', () => {
    const failed = decodedSpan({
      name: 'chat',
      parentSpanId: PARENT,
      statusCode: StatusCode.ERROR,
      attributes: { 'gen_ai.operation.name': 'chat', 'error.type': 'rate_limit_exceeded' },
    });
    expect(normalizeSpan(failed).errorType).toBe('rate_limit_exceeded');

    const thrown = decodedSpan({
      name: 'chat',
      parentSpanId: PARENT,
      statusCode: StatusCode.ERROR,
      attributes: { 'gen_ai.operation.name': 'chat' },
      events: [
        {
          name: 'exception',
          atMs: 900,
          attributes: { 'exception.type': 'openai.APITimeoutError', 'exception.message': 'Request timed out.' },
        },
      ],
    });
    expect(normalizeSpan(thrown).errorType).toBe('openai.APITimeoutError');

    const ok = decodedSpan({ name: 'chat', parentSpanId: PARENT, statusCode: StatusCode.OK, attributes: { 'error.type': 'retried' } });
    expect(normalizeSpan(ok).errorType).toBe('');
  });
});
