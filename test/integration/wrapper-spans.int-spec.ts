import { graphql } from '../support';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, postTraces } from './raw-otlp';
import { NS_PER_MS, hex, jsonExport, jsonSpan } from './otlp-json';

/*
 * A wrapper span that repeats its children's usage (an agent's totals, the Vercel AI SDK's
 * ai.generateText around its ai.generateText.doGenerate calls) owns none of it: in trace.spans its
 * own tokens and cost are 0, so the spans add up to the trace, and what it stated is shown apart.
 */
describe("spans that repeat their children's usage", () => {
  let h: IngestHarness;
  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());

  it('show 0 as their own cost and tokens, and their stated totals apart, so the spans add up to the trace', async () => {
    const project = await h.newProject('wrappers');
    const traceId = hex(16);
    const rootId = hex(8);
    const start = BigInt(Date.now()) * NS_PER_MS;
    const calls = [
      { input: 1_200, output: 80 },
      { input: 700, output: 160 },
    ];
    const total = { input: calls.reduce((n, c) => n + c.input, 0), output: calls.reduce((n, c) => n + c.output, 0) };
    const vercel = (usage: { input: number; output: number }) => ({
      'ai.model.id': { stringValue: 'gpt-4o-mini' },
      'ai.model.provider': { stringValue: 'openai.chat' },
      'ai.usage.promptTokens': { intValue: String(usage.input) },
      'ai.usage.completionTokens': { intValue: String(usage.output) },
    });
    const spans = [
      jsonSpan({
        traceId,
        spanId: rootId,
        name: 'ai.generateText',
        start,
        end: start + 3_000n * NS_PER_MS,
        attributes: { 'ai.operationId': { stringValue: 'ai.generateText' }, ...vercel(total) },
      }),
      ...calls.map((call, i) =>
        jsonSpan({
          traceId,
          parentSpanId: rootId,
          name: 'ai.generateText.doGenerate',
          start: start + BigInt(i * 1_000) * NS_PER_MS,
          end: start + BigInt(i * 1_000 + 900) * NS_PER_MS,
          attributes: { 'ai.operationId': { stringValue: 'ai.generateText.doGenerate' }, ...vercel(call) },
        }),
      ),
    ];
    expect((await postTraces(h.http, jsonExport(spans), { type: JSON_TYPE, key: project.apiKey })).status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length, 10_000);

    type Answer = {
      trace: {
        costUsd: number;
        inputTokens: number;
        outputTokens: number;
        spans: Array<{
          name: string;
          costUsd: number;
          inputTokens: number;
          outputTokens: number;
          statedInputTokens: number | null;
          statedOutputTokens: number | null;
          statedCostUsd: number | null;
        }>;
      } | null;
    };
    const read = () =>
      graphql<Answer>(
        api,
        'query($id: String!) { trace(traceId: $id) { costUsd inputTokens outputTokens spans { name costUsd inputTokens outputTokens statedInputTokens statedOutputTokens statedCostUsd } } }',
        { id: traceId },
        project.apiKey,
      );
    let answer = await read();
    for (let i = 0; i < 50 && !answer.data?.trace; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await read();
    }
    expect(answer.errors).toBeUndefined();
    const trace = answer.data!.trace!;
    expect({ input: trace.inputTokens, output: trace.outputTokens }).toEqual(total);
    const wrapper = trace.spans.find((s) => s.name === 'ai.generateText')!;
    expect({ cost: wrapper.costUsd, input: wrapper.inputTokens, output: wrapper.outputTokens }).toEqual({ cost: 0, input: 0, output: 0 });
    expect({ input: wrapper.statedInputTokens, output: wrapper.statedOutputTokens }).toEqual(total);
    expect(wrapper.statedCostUsd).toBeGreaterThan(0);
    const own = trace.spans.filter((s) => s.name !== 'ai.generateText');
    expect(own.every((s) => s.statedInputTokens === null && s.statedCostUsd === null)).toBe(true);
    const sum = (key: 'costUsd' | 'inputTokens' | 'outputTokens') => trace.spans.reduce((n, s) => n + s[key], 0);
    expect(sum('inputTokens')).toBe(trace.inputTokens);
    expect(sum('outputTokens')).toBe(trace.outputTokens);
    expect(sum('costUsd')).toBeCloseTo(trace.costUsd, 9);
    // The wrapper stated what its calls cost together.
    expect(wrapper.statedCostUsd).toBeCloseTo(trace.costUsd, 9);
  });
});
