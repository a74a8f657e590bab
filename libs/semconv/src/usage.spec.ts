import { contractTotals, decodedSpan, PARENT } from './decoded-span.fixture';
import { readUsage } from './usage';

const usageOf = (attributes: Record<string, number | string>, scope = '', provider = 'openai') =>
  readUsage(decodedSpan({ name: 'chat', parentSpanId: PARENT, scope, attributes }), provider);

describe('readUsage', () => {
  it('says when a span states no usage', () => {
    expect(usageOf({ 'gen_ai.operation.name': 'chat' })).toEqual({
      usage: { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
      found: false,
    });
  });

  it('reads an "inclusive" total smaller than its cache parts as the uncached count, not as zero', () => {
    const raw = { input: 2, cacheRead: 47_105, cacheWrite: 1_076 };
    const { usage } = usageOf({
      'gen_ai.usage.input_tokens': raw.input,
      'gen_ai.usage.cache_read.input_tokens': raw.cacheRead,
      'gen_ai.usage.cache_creation.input_tokens': raw.cacheWrite,
    });
    expect(usage).toMatchObject({ inputUncached: raw.input, cacheRead: raw.cacheRead, cacheWrite: raw.cacheWrite });
  });

  it('reads OpenLIT Anthropic input as exclusive of cache, other OpenLIT providers as inclusive', () => {
    const attributes = {
      'gen_ai.usage.input_tokens': 50_000,
      'gen_ai.usage.cache_read.input_tokens': 40_000,
      'gen_ai.usage.output_tokens': 10,
    };
    expect(usageOf(attributes, 'openlit.otel.tracing', 'anthropic').usage.inputUncached).toBe(50_000);
    expect(usageOf(attributes, 'openlit.otel.tracing', 'openai').usage.inputUncached).toBe(50_000 - 40_000);
  });

  it('parses counts sent as strings (Logfire sends large ints so)', () => {
    expect(usageOf({ 'gen_ai.usage.input_tokens': '120', 'gen_ai.usage.output_tokens': '7' }).usage).toMatchObject({
      inputUncached: 120,
      output: 7,
    });
  });

  it('ignores negative and non-numeric counts', () => {
    expect(usageOf({ 'gen_ai.usage.input_tokens': -5, 'gen_ai.usage.output_tokens': 'many' }).found).toBe(false);
  });

  it('reads reasoning reported beside the output (an output total smaller than reasoning) without losing tokens', () => {
    const { usage } = usageOf({
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 200,
      'gen_ai.usage.reasoning.output_tokens': 900,
    });
    expect(usage).toMatchObject({ output: 200, reasoning: 900 });
  });

  it('reads Langfuse usage_details in the OpenAI shape as inclusive', () => {
    const details = {
      prompt_tokens: 1_000,
      completion_tokens: 500,
      total_tokens: 1_500,
      prompt_tokens_details: { cached_tokens: 600 },
      completion_tokens_details: { reasoning_tokens: 300 },
    };
    const { usage } = usageOf({ 'langfuse.observation.usage_details': JSON.stringify(details) });
    expect(usage).toEqual({ inputUncached: 1_000 - 600, cacheRead: 600, cacheWrite: 0, output: 500 - 300, reasoning: 300 });
    expect(contractTotals(usage)).toEqual({ inputTokens: 1_000, outputTokens: 500 });
  });

  it('prefers Langfuse usage_details over the GenAI attributes on the same span', () => {
    const { usage } = usageOf({ 'langfuse.observation.usage_details': '{"input":3,"output":4}', 'gen_ai.usage.input_tokens': 99 });
    expect(usage).toMatchObject({ inputUncached: 3, output: 4 });
  });

  it('reads the older OpenInference cache_input name', () => {
    const { usage } = usageOf({
      'llm.token_count.prompt': 100,
      'llm.token_count.prompt_details.cache_input': 60,
      'llm.token_count.completion': 5,
      'llm.token_count.completion_details.reasoning': 2,
    });
    expect(usage).toEqual({ inputUncached: 40, cacheRead: 60, cacheWrite: 0, output: 3, reasoning: 2 });
  });
});
