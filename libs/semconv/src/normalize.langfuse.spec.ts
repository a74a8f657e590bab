import { contractTotals, decodedSpan, PARENT, START_MS } from './decoded-span.fixture';
import { normalizeSpan } from './normalize';
import { StatusCode } from '@spanforge/otlp';

// Langfuse SDK v3 (Python) / v4 (JS) over OTel (attribute names: langfuse/langfuse
// packages/shared/src/server/otel/attributes.ts). usage_details entries are disjoint (Langfuse sums
// every "input" key for its input total); cost_details carries USD.

const usageDetails = { input: 320, input_cached_tokens: 1_536, output: 410, output_reasoning_tokens: 1_088, total: 3_354 };
const costDetails = { input: 0.000352, input_cached_tokens: 0.000845, output: 0.006591, total: 0.007788 };
const firstTokenAfterMs = 742; // Date.parse keeps milliseconds; the SDK writes microseconds

const generation = (): ReturnType<typeof decodedSpan> =>
  decodedSpan({
    name: 'draft-answer',
    parentSpanId: PARENT,
    scope: 'langfuse-sdk',
    resource: { 'telemetry.sdk.language': 'python' },
    attributes: {
      'langfuse.observation.type': 'generation',
      'langfuse.observation.model.name': 'o3-mini',
      'langfuse.observation.model.parameters': JSON.stringify({ reasoning_effort: 'medium' }),
      'langfuse.observation.usage_details': JSON.stringify(usageDetails),
      'langfuse.observation.cost_details': JSON.stringify(costDetails),
      'langfuse.observation.completion_start_time': JSON.stringify(
        new Date(START_MS + firstTokenAfterMs).toISOString().replace('Z', '000Z'),
      ),
      'langfuse.observation.input': JSON.stringify([{ role: 'user', content: 'Is the invoice overdue?' }]),
      'langfuse.observation.output': JSON.stringify({ role: 'assistant', content: 'Yes, by 12 days.' }),
      'langfuse.observation.level': 'DEFAULT',
      'langfuse.environment': 'production',
    },
  });

describe('normalizeSpan: Langfuse generation', () => {
  it('types it LLM and infers the provider from the model it names', () => {
    const n = normalizeSpan(generation());
    expect(n).toMatchObject({
      spanType: 'LLM',
      convention: 'langfuse',
      operation: 'generation',
      model: 'o3-mini',
      pricingModel: 'o3-mini',
      provider: 'openai',
    });
  });

  it('maps usage_details straight onto the exclusive buckets', () => {
    const { usage, usageIsAggregate } = normalizeSpan(generation());
    expect(usage).toEqual({
      inputUncached: usageDetails.input,
      cacheRead: usageDetails.input_cached_tokens,
      cacheWrite: 0,
      output: usageDetails.output,
      reasoning: usageDetails.output_reasoning_tokens,
    });
    const totals = contractTotals(usage);
    expect(totals.inputTokens + totals.outputTokens).toBe(usageDetails.total);
    expect(usageIsAggregate).toBe(false);
  });

  it('takes the stated cost total, and TTFT from a double-encoded completion_start_time', () => {
    const n = normalizeSpan(generation());
    expect(n.explicitCostUsd).toBe(costDetails.total);
    expect(n.ttftMs).toBeCloseTo(firstTokenAfterMs, 6);
  });

  it('moves the observation input and output', () => {
    const n = normalizeSpan(generation());
    expect(JSON.parse(n.input)).toEqual([{ role: 'user', content: 'Is the invoice overdue?' }]);
    expect(JSON.parse(n.output)).toEqual({ role: 'assistant', content: 'Yes, by 12 days.' });
    expect(Object.keys(n.attributes).sort()).toEqual([
      'langfuse.environment',
      'langfuse.observation.completion_start_time',
      'langfuse.observation.cost_details',
      'langfuse.observation.level',
      'langfuse.observation.model.name',
      'langfuse.observation.model.parameters',
      'langfuse.observation.type',
      'langfuse.observation.usage_details',
    ]);
  });

  it('sums cost_details without a total, and reads Anthropic-style cache keys', () => {
    const span = decodedSpan({
      name: 'claude-call',
      parentSpanId: PARENT,
      attributes: {
        'langfuse.observation.type': 'generation',
        'langfuse.observation.model.name': 'claude-sonnet-4-20250514',
        'langfuse.observation.usage_details': { input: 5, cache_read_input_tokens: 9_000, cache_creation_input_tokens: 700, output: 90 },
        'langfuse.observation.cost_details': JSON.stringify({
          input: 0.000015,
          cache_read_input_tokens: 0.0027,
          cache_creation_input_tokens: 0.002625,
          output: 0.00135,
        }),
      },
    });
    const n = normalizeSpan(span);
    expect(n.usage).toEqual({ inputUncached: 5, cacheRead: 9_000, cacheWrite: 700, output: 90, reasoning: 0 });
    expect(n.explicitCostUsd).toBeCloseTo(0.000015 + 0.0027 + 0.002625 + 0.00135, 12);
    expect(n.provider).toBe('anthropic');
  });
});

describe('normalizeSpan: other Langfuse observation types', () => {
  it.each([
    ['agent', 'AGENT'],
    ['tool', 'TOOL'],
    ['chain', 'CHAIN'],
    ['retriever', 'RETRIEVAL'],
    ['evaluator', 'EVALUATION'],
    ['embedding', 'EMBEDDING'],
    ['guardrail', 'GUARDRAIL'],
  ])('maps %s to %s', (type, spanType) => {
    expect(
      normalizeSpan(decodedSpan({ name: type, parentSpanId: PARENT, attributes: { 'langfuse.observation.type': type } })).spanType,
    ).toBe(spanType);
  });

  it('names agent and tool observations after the span', () => {
    expect(
      normalizeSpan(decodedSpan({ name: 'billing-agent', parentSpanId: PARENT, attributes: { 'langfuse.observation.type': 'agent' } }))
        .agentName,
    ).toBe('billing-agent');
    expect(
      normalizeSpan(decodedSpan({ name: 'fetch_invoice', parentSpanId: PARENT, attributes: { 'langfuse.observation.type': 'tool' } }))
        .toolName,
    ).toBe('fetch_invoice');
  });

  it('reads a "span" carrying a model as a generation (Python SDK <= 3.3.0), and a plain span by other signals', () => {
    expect(
      normalizeSpan(
        decodedSpan({
          name: 'llm',
          parentSpanId: PARENT,
          attributes: { 'langfuse.observation.type': 'span', 'langfuse.observation.model.name': 'gpt-4o' },
        }),
      ).spanType,
    ).toBe('LLM');
    const plain = normalizeSpan(
      decodedSpan({
        name: 'fetch',
        parentSpanId: PARENT,
        attributes: { 'langfuse.observation.type': 'span', 'http.request.method': 'GET' },
      }),
    );
    expect(plain).toMatchObject({ spanType: 'HTTP', convention: 'http' });
  });

  it('upgrades a root span of the Langfuse SDK to RUN and takes the Langfuse session and user ids', () => {
    const n = normalizeSpan(
      decodedSpan({
        name: 'handle-request',
        scope: 'langfuse-sdk',
        attributes: { 'langfuse.observation.type': 'span', 'langfuse.session.id': 'sess-1', 'langfuse.user.id': 'user-1' },
      }),
    );
    expect(n).toMatchObject({ spanType: 'RUN', sessionId: 'sess-1', userId: 'user-1' });
  });
});

describe('normalizeSpan: a Langfuse observation at level ERROR', () => {
  const failed = (level: string, statusCode?: StatusCode) => {
    const span = decodedSpan({
      name: 'lookup-order',
      parentSpanId: PARENT,
      scope: 'langfuse-sdk',
      statusCode,
      attributes: {
        'langfuse.observation.type': 'tool',
        'langfuse.observation.level': level,
        'langfuse.observation.status_message': 'order service timed out',
      },
    });
    return { span, normalized: normalizeSpan(span) };
  };

  it('is an error span with the observation status message when the OTel status was left unset', () => {
    const { span } = failed('ERROR');
    expect({ code: span.statusCode, message: span.statusMessage }).toEqual({ code: StatusCode.ERROR, message: 'order service timed out' });
  });

  it('keeps an OTel status the SDK set, and leaves other levels alone', () => {
    const ok = failed('ERROR', StatusCode.ERROR);
    expect(ok.span.statusMessage).toBe('');
    const warning = failed('WARNING');
    expect(warning.span.statusCode).toBe(StatusCode.UNSET);
  });
});
