import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { PriceTable, costOf } from '@spanforge/pricing';
import { graphql } from '../support';
import { attributesOfJson, readableSpansOfJson } from '../support/otlp-json-spans';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { JSON_TYPE, PROTOBUF, jsonBody, recordTrace, traceIdOf } from './raw-otlp';

/*
 * A Langfuse SDK pointed at this service: it posts OTLP to /api/public/otel/v1/traces with
 * `Authorization: Basic base64(public_key:secret_key)`. The secret key is our API key; the public
 * key may be anything (docs/api.md).
 */
describe('the Langfuse SDKs as clients', () => {
  let h: IngestHarness;

  let api: string;

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
  });
  afterAll(() => h?.stop());

  it('takes their export at their path with Basic auth, and stores it', async () => {
    const project = await h.newProject('langfuse-user');
    const spans = recordTrace(4, 'langfuse');
    const authorization = `Basic ${Buffer.from(`pk-lf-anything:${project.apiKey}`).toString('base64')}`;
    const answer = await fetch(`${h.http}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, authorization, 'x-langfuse-public-key': 'pk-lf-anything' },
      body: jsonBody(spans),
    });
    expect(answer.status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length, 10_000);
    // A wrong secret is refused as any wrong key is.
    const refused = await fetch(`${h.http}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, authorization: `Basic ${Buffer.from('pk-lf-anything:sk-lf-not-ours').toString('base64')}` },
      body: jsonBody(recordTrace(1, 'langfuse-refused')),
    });
    expect(refused.status).toBe(401);
  });

  it("normalises the Python SDK 4's OpenAI generations from its exact request: types, model, cached tokens and their price, TTFT, session, user, errors", async () => {
    const project = await h.newProject('langfuse-python');
    // test/fixtures/python/README.md: what langfuse-python 4.14.3 sends for an @observe'd agent making
    // one streamed OpenAI call that reads 1,000 of its 1,200 input tokens from the cache, and one that fails.
    const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'python', 'langfuse-openai.traces.json'), 'utf8'));
    const spans = readableSpansOfJson(fixture);
    const publicKey = String(attributesOfJson(fixture.resourceSpans[0].scopeSpans[0].scope.attributes).public_key);
    // The request its OTLPSpanExporter makes: protobuf, Basic auth of public:secret, its own headers.
    const answer = await fetch(`${h.http}/api/public/otel/v1/traces`, {
      method: 'POST',
      headers: {
        'content-type': PROTOBUF,
        authorization: `Basic ${Buffer.from(`${publicKey}:${project.apiKey}`).toString('base64')}`,
        'x-langfuse-sdk-name': 'python',
        'x-langfuse-sdk-version': '4.14.3',
        'x-langfuse-public-key': publicKey,
        'user-agent': 'OTel-OTLP-Exporter-Python/1.40.0',
      },
      body: ProtobufTraceSerializer.serializeRequest(spans),
    });
    expect(answer.status).toBe(200);
    await h.waitForSpans(project.projectId, spans.length, 10_000);

    const traceId = spans[0]!.spanContext().traceId;
    const result = await graphql<{
      trace: {
        sessionId: string;
        userId: string;
        costUsd: number;
        errorCount: number;
        spans: Array<{
          name: string;
          type: string;
          model: string | null;
          inputTokens: number;
          outputTokens: number;
          costUsd: number;
          statusCode: string;
          statusMessage: string | null;
        }>;
      };
      modelStats: Array<{ model: string; calls: number; ttftP50Ms: number | null }>;
    }>(
      api,
      `
        query ($t: String!) {
          trace(traceId: $t) {
            sessionId
            userId
            costUsd
            errorCount
            spans {
              name
              type
              model
              inputTokens
              outputTokens
              costUsd
              statusCode
              statusMessage
            }
          }
          modelStats(filter: { from: "2026-11-29T00:00:00Z", to: "2026-12-01T00:00:00Z" }) {
            model
            calls
            ttftP50Ms
          }
        }
      `,
      { t: traceId },
      project.apiKey,
    );
    expect(result.errors).toBeUndefined();
    const { trace, modelStats } = result.data!;
    const byName = new Map(trace.spans.map((span) => [span.name, span]));
    const sent = new Map(spans.map((span) => [span.name, span]));

    const generation = sent.get('OpenAI-generation')!;
    const usage = JSON.parse(String(generation.attributes['langfuse.observation.usage_details'])) as {
      prompt_tokens: number;
      completion_tokens: number;
      prompt_tokens_details: { cached_tokens: number };
    };
    const model = String(generation.attributes['langfuse.observation.model.name']);
    const price = PriceTable.bundled().lookup(model, 'openai', generation.startTime[0] * 1000)!;
    const cost = costOf(
      {
        inputUncached: usage.prompt_tokens - usage.prompt_tokens_details.cached_tokens,
        cacheRead: usage.prompt_tokens_details.cached_tokens,
        cacheWrite: 0,
        output: usage.completion_tokens,
        reasoning: 0,
      },
      price,
    );
    expect(byName.get('OpenAI-generation')).toMatchObject({
      type: 'LLM',
      model,
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
      statusCode: 'UNSET',
    });
    expect(byName.get('OpenAI-generation')!.costUsd).toBeCloseTo(cost, 12);
    // Cached tokens are billed at the cache-read price: less than the same tokens uncached.
    expect(cost).toBeLessThan(
      costOf({ inputUncached: usage.prompt_tokens, cacheRead: 0, cacheWrite: 0, output: usage.completion_tokens, reasoning: 0 }, price),
    );

    const failed = sent.get('push-notification-summary')!;
    expect(byName.get('push-notification-summary')).toMatchObject({
      type: 'LLM',
      statusCode: 'ERROR',
      statusMessage: failed.attributes['langfuse.observation.status_message'],
      costUsd: 0,
    });
    expect(trace.errorCount).toBe(1);
    expect(trace.sessionId).toBe(sent.get('answer_travel_question')!.attributes['session.id']);
    expect(trace.userId).toBe(sent.get('answer_travel_question')!.attributes['user.id']);
    expect(trace.costUsd).toBeCloseTo(
      trace.spans.reduce((sum, span) => sum + span.costUsd, 0),
      12,
    );

    // TTFT: the first chunk's time (completion_start_time, JSON-encoded twice) after the call's start.
    const firstChunk = Date.parse(JSON.parse(String(generation.attributes['langfuse.observation.completion_start_time'])) as string);
    const startMs = generation.startTime[0] * 1000 + generation.startTime[1] / 1e6;
    // A DDSketch answers percentiles within 0.5 % (docs/api.md).
    const ttft = modelStats.find((row) => row.model === model)!.ttftP50Ms!;
    expect(Math.abs(ttft - (firstChunk - startMs))).toBeLessThanOrEqual((firstChunk - startMs) * 0.005);
  });

  it('takes their scores at /api/public/scores as feedback on the trace', async () => {
    const project = await h.newProject('langfuse-scores');
    const spans = recordTrace(2, 'scored');
    const traceId = traceIdOf(spans);
    const authorization = `Basic ${Buffer.from(`pk-lf-anything:${project.apiKey}`).toString('base64')}`;
    const score = (body: Record<string, unknown>) =>
      fetch(`${h.http}/api/public/scores`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify(body),
      });
    const sent = { id: 'lf-score-1', traceId, name: 'correctness', value: 0.75, comment: 'mostly right', dataType: 'NUMERIC' };
    const answer = await score(sent);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ id: 'lf-score-1' });
    // The same score again (an SDK's retry) keeps one, as feedback does.
    expect((await score(sent)).status).toBe(200);
    const rows = await h.query<{ name: string; value_number: number; comment: string; source: string }>(
      'SELECT name, value_number, comment, source FROM feedback FINAL WHERE project_id = {p:String} AND trace_id = {t:String}',
      { p: project.projectId, t: traceId },
    );
    expect(rows).toEqual([{ name: 'correctness', value_number: 0.75, comment: 'mostly right', source: 'langfuse' }]);
    const bad = await score({ traceId: 'not-a-trace', name: 'x', value: 1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_USER_INPUT');
    const anonymous = await fetch(`${h.http}/api/public/scores`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
  });
});
