import { trace, type Span } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { MAX_SPANS_PER_READ, ScopedClickHouse, TraceService, spanCursor } from '@spanforge/query';
import { SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter } from '../support';
import { expectedConcurrency, expectedCriticalPath, expectedLlmCost, expectedTrace, recordAgentTrace, type LlmCall } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { recordedReads } from './statement-faults';

const toNs = (t: [number, number]) => t[0] * 1e9 + t[1];

/** Percentile as ClickHouse quantileExactInclusive computes it: linear interpolation at p·(n−1). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.min(lower + 1, sorted.length - 1);
  return sorted[lower]! + (position - lower) * (sorted[upper]! - sorted[lower]!);
}

/**
 * Percentile as the span statistics define it (a DDSketch of the minute rollup, libs/clickhouse
 * span-metrics.sql.ts): the value at rank ⌊p·(n−1)⌋, answered within 0.5 %.
 */
function rankPercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(p * (sorted.length - 1))]!;
}

/** A sketch's answer: within 1 % of the rank percentile. */
function expectSketched(got: number, want: number): void {
  expect(Math.abs(got - want)).toBeLessThanOrEqual(Math.abs(want) * 0.01);
}

const MINI: LlmCall = { model: 'gpt-4o-mini', provider: 'openai', input: 1_000, cacheRead: 200, output: 100 };
const SONNET: LlmCall = { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 3_000, cacheRead: 0, output: 400 };

/**
 * The GraphQL query API against traces sent through the real exporter; every expected figure is
 * computed here from the spans sent.
 */
describe('query API', () => {
  let h: IngestHarness;
  let api: string;
  let project: Awaited<ReturnType<IngestHarness['newProject']>>;
  let other: Awaited<ReturnType<IngestHarness['newProject']>>;
  const traces: Array<{ spans: ReadableSpan[]; expected: ReturnType<typeof expectedTrace> }> = [];
  const base = Date.UTC(2026, 10, 10, 9);

  /** 9 traces: iterations 1–3, two sessions, one with a failed call, one per hour. */
  const plan: Array<{ session: string; calls: LlmCall[] }> = [
    { session: 'alpha', calls: [MINI] },
    { session: 'alpha', calls: [MINI, SONNET] },
    { session: 'alpha', calls: [SONNET, MINI, MINI] },
    { session: 'beta', calls: [MINI] },
    { session: 'beta', calls: [{ ...SONNET, failed: true }, SONNET] },
    { session: 'beta', calls: [MINI, MINI, SONNET] },
    { session: 'alpha', calls: [SONNET] },
    { session: 'beta', calls: [MINI, SONNET] },
    { session: 'alpha', calls: [MINI, MINI, MINI] },
  ];

  beforeAll(async () => {
    h = await startIngestHarness();
    api = h.api;
    project = await h.newProject('query-tenant');
    other = await h.newProject('other-tenant');
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey);
    for (const [i, entry] of plan.entries()) {
      const recorder = new SpanRecorder('query-agent');
      recordAgentTrace(recorder, { session: entry.session, calls: entry.calls, start: base + i * 3_600_000 });
      const spans = recorder.finished();
      traces.push({ spans, expected: expectedTrace(spans) });
      expect(exportSucceeded(await exportSpans(exporter, spans))).toBe(true);
    }
    await h.waitForSpans(
      project.projectId,
      traces.reduce((n, t) => n + t.spans.length, 0),
    );
    // The other project gets one trace of its own, so isolation is tested against real data.
    const recorder = new SpanRecorder('other-agent');
    recordAgentTrace(recorder, { session: 'alpha', calls: [SONNET], start: base });
    expect(
      exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, other.apiKey), recorder.finished())),
    ).toBe(true);
    await h.waitForSpans(other.projectId, recorder.finished().length);
  });
  afterAll(() => h.stop());

  const q = <T>(query: string, variables: Record<string, unknown> = {}, key = project.apiKey) => graphql<T>(api, query, variables, key);
  /** A project's costs per day, as costBreakdown(groupBy: [DAY]) answers them. */
  const costByDay = async (filter: Record<string, string>, key: string) => {
    const result = await q<{ costBreakdown: Array<{ keys: string[]; costUsd: number }> }>(
      'query($f: TraceFilter) { costBreakdown(groupBy: [DAY], filter: $f) { keys costUsd } }',
      { f: filter },
      key,
    );
    expect(result.errors).toBeUndefined();
    return result.data!.costBreakdown;
  };
  /** Waits, at most 30 s, until the worker's upkeep makes `done` true. */
  const until = async (done: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  };

  it('answers trace() with the documented figures and the span tree', async () => {
    const { spans, expected } = traces[4]!;
    const result = await q<{ trace: Record<string, unknown> & { spans: Array<Record<string, unknown>> } }>(
      `query($id: String!) { trace(traceId: $id) {
        traceId sessionId rootName startTime durationMs iterations costUsd inputTokens outputTokens errorCount
        spans { spanId parentSpanId name type startTime endTime durationMs statusCode statusMessage kind model inputTokens outputTokens costUsd attributes }
        feedback { name value comment } } }`,
      { id: expected.traceId },
    );
    expect(result.errors).toBeUndefined();
    const trace = result.data!.trace;
    expect(trace).toMatchObject({
      traceId: expected.traceId,
      sessionId: 'beta',
      rootName: 'agent.run',
      iterations: expected.iterations,
      inputTokens: expected.inputTokens,
      outputTokens: expected.outputTokens,
      errorCount: expected.errorCount,
      feedback: [],
    });
    expect(trace.durationMs).toBeCloseTo(expected.durationMs, 3);
    expect(trace.costUsd as number).toBeCloseTo(expected.costUsd, 9);
    const root = spans.find((s) => !s.parentSpanContext)!;
    expect(trace.startTime).toBe(new Date(root.startTime[0] * 1000 + root.startTime[1] / 1e6).toISOString());
    expect(trace.spans).toHaveLength(spans.length);
    const byId = new Map(trace.spans.map((s) => [s.spanId as string, s]));
    for (const span of spans) {
      const got = byId.get(span.spanContext().spanId)!;
      expect(got.parentSpanId).toBe(span.parentSpanContext?.spanId ?? null);
      expect(got.name).toBe(span.name);
      expect(got.statusCode).toBe(span.status.code === 2 ? 'ERROR' : 'UNSET');
      expect(got.statusMessage).toBe(span.status.message || null);
      expect(got.kind).toBe(['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'][span.kind]);
    }
    expect(byId.get(root.spanContext().spanId)!.type).toBe('RUN');
    const llm = trace.spans.find((s) => s.type === 'LLM')!;
    // Numbers stay numbers in attributes; message contents are not there (spanDetail has them).
    expect(typeof (llm.attributes as Record<string, unknown>)['gen_ai.usage.input_tokens']).toBe('number');
    expect(llm.attributes).not.toHaveProperty('gen_ai.input.messages');
    const analysis = await q<{
      trace: {
        criticalPath: Array<{ spanId: string }>;
        parallelism: number;
        concurrency: number;
        retries: number;
        loopSuspected: boolean;
        findings: unknown[];
        unaccountedMs: number;
      };
    }>(
      'query($id: String!) { trace(traceId: $id) { criticalPath { spanId name durationMs selfMs } parallelism concurrency retries loopSuspected unaccountedMs findings { kind message spanIds } } }',
      { id: expected.traceId },
    );
    expect(analysis.errors).toBeUndefined();
    // Every span of this sequential turn is on the critical path: the root, then each in start order.
    const inOrder = spans.filter((s) => s.parentSpanContext).sort((a, b) => toNs(a.startTime) - toNs(b.startTime));
    expect(analysis.data!.trace.criticalPath.map((s) => s.spanId)).toEqual([root, ...inOrder].map((s) => s.spanContext().spanId));
    const sum = spans.reduce((n, s) => n + toNs(s.endTime) - toNs(s.startTime), 0) / 1e6;
    expect(analysis.data!.trace.parallelism).toBeCloseTo(sum / expected.durationMs, 6);
    // Nothing ran side by side in this turn: one thing at a time, however deep the nesting.
    expect(expectedConcurrency(spans)).toBeCloseTo(1, 6);
    expect(analysis.data!.trace.concurrency).toBeCloseTo(1, 6);
    expect(analysis.data!.trace.loopSuspected).toBe(false);
    // The root's own time: the 10 ms after its last agent ended.
    expect(analysis.data!.trace.unaccountedMs).toBeCloseTo(10, 3);
    const detail = await q<{ spanDetail: { input: string } }>(
      'query($t: String!, $s: String!) { spanDetail(traceId: $t, spanId: $s) { input } }',
      { t: expected.traceId, s: llm.spanId },
    );
    expect(detail.data!.spanDetail.input).toContain('Lisbon');
    // The failed call's events, as sent: what went wrong is readable, not only that something did.
    const failed = spans.find((s) => s.status.code === 2)!;
    expect(failed.events.length).toBeGreaterThan(0);
    const events = await q<{ spanDetail: { events: Array<{ name: string; time: string; attributes: Record<string, unknown> }> } }>(
      'query($t: String!, $s: String!) { spanDetail(traceId: $t, spanId: $s) { events { name time attributes } } }',
      { t: expected.traceId, s: failed.spanContext().spanId },
    );
    expect(events.errors).toBeUndefined();
    expect(events.data!.spanDetail.events).toEqual(
      failed.events.map((e) => ({
        name: e.name,
        time: new Date(e.time[0] * 1000 + e.time[1] / 1e6).toISOString(),
        attributes: e.attributes,
      })),
    );
  });

  it('finds the critical path of a turn whose tools ran in parallel', async () => {
    const parallel = await h.newProject('parallel-tenant');
    const recorder = new SpanRecorder('parallel-agent');
    const t0 = Date.UTC(2026, 10, 10, 12);
    const llm = (at: number, end: number, parent: Span) =>
      recorder.span(
        `chat ${MINI.model}`,
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': MINI.provider,
          'gen_ai.request.model': MINI.model,
          'gen_ai.usage.input_tokens': MINI.input,
          'gen_ai.usage.output_tokens': MINI.output,
        },
        { start: at, end },
        parent,
      );
    const tool = (name: string, at: number, end: number, parent: Span) =>
      recorder.span(
        `execute_tool ${name}`,
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name },
        { start: at, end },
        parent,
      );
    // One turn: plan, three tools at once (the slowest calls an API), then the answer.
    const root = recorder.span(
      'agent.run',
      { 'gen_ai.operation.name': 'invoke_agent', 'session.id': 'parallel' },
      { start: t0, end: t0 + 1_000 },
    );
    const parts = [
      llm(t0 + 10, t0 + 200, root),
      tool('weather', t0 + 200, t0 + 700, root),
      tool('calendar', t0 + 200, t0 + 500, root),
      tool('search', t0 + 210, t0 + 650, root),
      llm(t0 + 700, t0 + 950, root),
    ];
    const api = recorder.span('GET /forecast', { 'http.request.method': 'GET' }, { start: t0 + 250, end: t0 + 680 }, parts[1]);
    for (const span of [api, ...parts, root]) recorder.end(span);
    const spans = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, parallel.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(parallel.projectId, spans.length);

    // The critical-path rule (agent-trace.ts), computed from the spans sent.
    const path = expectedCriticalPath(spans);
    const end = (s: ReadableSpan) => toNs(s.endTime);
    const start = (s: ReadableSpan) => toNs(s.startTime);
    expect(path.map((s) => s.name)).toEqual([
      'agent.run',
      `chat ${MINI.model}`,
      'execute_tool weather',
      'GET /forecast',
      `chat ${MINI.model}`,
    ]);

    const traceId = root.spanContext().traceId;
    const result = await q<{
      trace: { criticalPath: Array<{ spanId: string; durationMs: number }>; parallelism: number; concurrency: number };
    }>(
      'query($id: String!) { trace(traceId: $id) { criticalPath { spanId durationMs } parallelism concurrency } }',
      { id: traceId },
      parallel.apiKey,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace.criticalPath.map((s) => s.spanId)).toEqual(path.map((s) => s.spanContext().spanId));
    result.data!.trace.criticalPath.forEach((step, i) => expect(step.durationMs).toBeCloseTo((end(path[i]!) - start(path[i]!)) / 1e6, 3));
    // Parallelism: the sum of all durations over the wall time.
    const busy = spans.reduce((n, s) => n + end(s) - start(s), 0) / 1e6;
    expect(result.data!.trace.parallelism).toBeCloseTo(busy / 1_000, 6);
    // Concurrency: own times over the wall time; the three tools overlapping push it over 1.
    expect(expectedConcurrency(spans)).toBeGreaterThan(1.5);
    expect(result.data!.trace.concurrency).toBeCloseTo(expectedConcurrency(spans), 6);
  });

  it.each([
    ['after its children', 'children first'],
    ['before its children', 'root first'],
    ['again after it was typed RUN (a retried export)', 'root resent'],
  ])('types a plain root RUN everywhere once its GenAI children are stored, when it arrives %s', async (_when, order) => {
    // A plain HTTP-handler root (no LLM signal of its own) whose children call a model and a tool, sent in two exports.
    const plain = await h.newProject(`plain-root-${order.replace(' ', '-')}`);
    const recorder = new SpanRecorder('support-svc');
    const t0 = Date.UTC(2026, 10, 12, 9);
    const root = recorder.span('support-turn', { 'session.id': `plain-${order}` }, { start: t0, end: t0 + 2_000 });
    const llm = recorder.span(
      `chat ${MINI.model}`,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': MINI.provider,
        'gen_ai.request.model': MINI.model,
        'gen_ai.response.model': MINI.model,
        'gen_ai.usage.input_tokens': MINI.input,
        'gen_ai.usage.output_tokens': MINI.output,
      },
      { start: t0 + 10, end: t0 + 900 },
      root,
    );
    const tool = recorder.span(
      'execute_tool search',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' },
      { start: t0 + 900, end: t0 + 1_500 },
      root,
    );
    for (const span of [llm, tool, root]) recorder.end(span);
    const sent = recorder.finished();
    const rootSpan = sent.find((s) => !s.parentSpanContext)!;
    const children = sent.filter((s) => s.parentSpanContext);
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, plain.apiKey);
    let stored = 0;
    for (const batch of order === 'children first' ? [children, [rootSpan]] : [[rootSpan], children]) {
      expect(exportSucceeded(await exportSpans(exporter, batch))).toBe(true);
      await h.waitForSpans(plain.projectId, (stored += batch.length));
    }
    const ask = <T>(query: string, variables: Record<string, unknown> = {}) => q<T>(query, variables, plain.apiKey);
    type Types = { spanTypeStats: Array<{ type: string; spanCount: number }> };
    const types = async () =>
      Object.fromEntries((await ask<Types>('{ spanTypeStats { type spanCount } }')).data!.spanTypeStats.map((r) => [r.type, r.spanCount]));
    await until(async () => (await types()).RUN === 1);
    if (order === 'root resent') {
      // The root's export again, as an exporter retrying it would: its copy, typed as sent, is now the stored one.
      const [{ now }] = await h.query<{ now: string }>('SELECT toString(now64(3)) AS now');
      const rootsSince = async () =>
        Number(
          (
            await h.query<{ n: string }>(
              "SELECT count() AS n FROM spans WHERE project_id = {projectId:String} AND parent_span_id = '' AND ingested_at > {now:DateTime64(3)}",
              { projectId: plain.projectId, now },
            )
          )[0]!.n,
        );
      expect(exportSucceeded(await exportSpans(exporter, [rootSpan]))).toBe(true);
      // Stored again (a merge keeps the newest row, so this holds whatever merges run meanwhile).
      await until(async () => (await rootsSince()) > 0);
      expect(await rootsSince()).toBeGreaterThan(0);
      await until(async () => (await types()).RUN === 1 && Object.keys(await types()).length === 3);
    }
    // The stats, the cost breakdown, the trace and its picture all agree: one RUN, one LLM, one TOOL, nothing OTHER.
    expect(await types()).toEqual({ RUN: 1, LLM: 1, TOOL: 1 });
    const byType = async () =>
      (
        await ask<{ costBreakdown: Array<{ keys: string[]; spanCount: number; costUsd: number }> }>(
          '{ costBreakdown(groupBy: [SPAN_TYPE]) { keys spanCount costUsd } }',
        )
      ).data!.costBreakdown;
    await until(async () => (await byType()).some((r) => r.keys[0] === 'RUN'));
    const breakdown = await byType();
    expect(Object.fromEntries(breakdown.map((r) => [r.keys[0], r.spanCount]))).toEqual({ RUN: 1, LLM: 1, TOOL: 1 });
    expect(breakdown.find((r) => r.keys[0] === 'LLM')!.costUsd).toBeCloseTo(
      expectedLlmCost(sent.find((s) => s.name.startsWith('chat'))!),
      9,
    );
    const traceId = rootSpan.spanContext().traceId;
    const trace = await ask<{ trace: { sessionId: string; spans: Array<{ spanId: string; name: string; type: string }> } }>(
      'query($id: String!) { trace(traceId: $id) { sessionId spans { spanId name type } } }',
      { id: traceId },
    );
    expect(trace.data!.trace.sessionId).toBe(`plain-${order}`);
    expect(trace.data!.trace.spans.map((s) => [s.name, s.type])).toEqual([
      ['support-turn', 'RUN'],
      [`chat ${MINI.model}`, 'LLM'],
      ['execute_tool search', 'TOOL'],
    ]);
    const svg = await (
      await fetch(`${api}/v1/traces/${traceId}/waterfall.svg`, { headers: { authorization: `Bearer ${plain.apiKey}` } })
    ).text();
    expect(svg).toContain('<title>support-turn — RUN');
    expect(svg).not.toContain('OTHER');
  });

  it('says which costs are unknown: a model without a price is UNPRICED, counted in modelStats, not shown as free', async () => {
    const mixed = await h.newProject('unpriced-tenant');
    const recorder = new SpanRecorder('finetune-svc');
    const t0 = Date.UTC(2026, 10, 14, 9);
    const root = recorder.span('answer', { 'gen_ai.operation.name': 'invoke_agent' }, { start: t0, end: t0 + 1_000 });
    const chat = (model: string, at: number) =>
      recorder.span(
        `chat ${model}`,
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': model,
          'gen_ai.response.model': model,
          'gen_ai.usage.input_tokens': 1_000,
          'gen_ai.usage.output_tokens': 500,
        },
        { start: at, end: at + 300 },
        root,
      );
    const known = chat(MINI.model, t0 + 10);
    const custom = chat('my-finetune-v1', t0 + 320);
    const tool = recorder.span(
      'execute_tool lookup',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
      { start: t0 + 650, end: t0 + 700 },
      root,
    );
    for (const span of [known, custom, tool, root]) recorder.end(span);
    const sent = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, mixed.apiKey), sent))).toBe(
      true,
    );
    await h.waitForSpans(mixed.projectId, sent.length);
    const traceId = root.spanContext().traceId;
    const trace = await q<{ trace: { spans: Array<{ name: string; costUsd: number; costSource: string | null }> } }>(
      'query($id: String!) { trace(traceId: $id) { spans { name costUsd costSource } } }',
      { id: traceId },
      mixed.apiKey,
    );
    expect(trace.errors).toBeUndefined();
    const source = Object.fromEntries(trace.data!.trace.spans.map((s) => [s.name, s.costSource]));
    expect(source).toEqual({
      answer: null,
      [`chat ${MINI.model}`]: 'PRICE_TABLE',
      'chat my-finetune-v1': 'UNPRICED',
      'execute_tool lookup': null,
    });
    const models = await q<{ modelStats: Array<{ model: string; calls: number; costUsd: number; unpricedCalls: number }> }>(
      '{ modelStats { model calls costUsd unpricedCalls } }',
      {},
      mixed.apiKey,
    );
    const byModel = Object.fromEntries(models.data!.modelStats.map((m) => [m.model, m]));
    expect(byModel['my-finetune-v1']).toEqual({ model: 'my-finetune-v1', calls: 1, costUsd: 0, unpricedCalls: 1 });
    expect(byModel[MINI.model]!.unpricedCalls).toBe(0);
    expect(byModel[MINI.model]!.costUsd).toBeCloseTo(expectedLlmCost(sent.find((s) => s.name === `chat ${MINI.model}`)!), 9);
  });

  it("prices a project's spans by the model price its admin set, and lists and removes that price", async () => {
    const priced = await h.newProject('own-prices-tenant');
    const admin = h.services.adminToken!;
    const SET =
      'mutation($i: ModelPriceInput!) { setModelPrice(input: $i) { id model inputPerMTok outputPerMTok cacheReadPerMTok effectiveFrom } }';
    // A negative price and a project key are refused, and nothing is stored.
    expect(
      (await q(SET, { i: { projectId: priced.projectId, model: MINI.model, inputPerMTok: -1, outputPerMTok: 2 } }, admin)).errors![0]!
        .extensions!.code,
    ).toBe('BAD_USER_INPUT');
    expect(
      (await q(SET, { i: { projectId: priced.projectId, model: MINI.model, inputPerMTok: 1, outputPerMTok: 2 } }, priced.apiKey))
        .errors![0]!.extensions!.code,
    ).toBe('FORBIDDEN');
    const set = await q<{
      setModelPrice: {
        id: string;
        model: string;
        inputPerMTok: number;
        outputPerMTok: number;
        cacheReadPerMTok: number | null;
        effectiveFrom: string;
      };
    }>(SET, { i: { projectId: priced.projectId, model: MINI.model, inputPerMTok: 100, outputPerMTok: 400, cacheReadPerMTok: 10 } }, admin);
    expect(set.errors).toBeUndefined();
    expect(set.data!.setModelPrice).toMatchObject({
      model: MINI.model,
      inputPerMTok: 100,
      outputPerMTok: 400,
      cacheReadPerMTok: 10,
      effectiveFrom: '1970-01-01T00:00:00.000Z',
    });
    const listed = await q<{ modelPrices: Array<{ id: string }> }>(
      'query($p: ID!) { modelPrices(projectId: $p) { id } }',
      { p: priced.projectId },
      admin,
    );
    expect(listed.data!.modelPrices.map((p) => p.id)).toEqual([set.data!.setModelPrice.id]);

    const recorder = new SpanRecorder('priced-svc');
    const t0 = Date.UTC(2026, 10, 15, 9);
    const call = recorder.span(
      `chat ${MINI.model}`,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': MINI.provider,
        'gen_ai.request.model': MINI.model,
        'gen_ai.response.model': MINI.model,
        'gen_ai.usage.input_tokens': MINI.input,
        'gen_ai.usage.cache_read.input_tokens': MINI.cacheRead,
        'gen_ai.usage.output_tokens': MINI.output,
      },
      { start: t0, end: t0 + 500 },
    );
    recorder.end(call);
    expect(
      exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, priced.apiKey), recorder.finished())),
    ).toBe(true);
    await h.waitForSpans(priced.projectId, 1);
    const trace = await q<{ trace: { costUsd: number; spans: Array<{ costUsd: number; costSource: string }> } }>(
      'query($id: String!) { trace(traceId: $id) { costUsd spans { costUsd costSource } } }',
      { id: call.spanContext().traceId },
      priced.apiKey,
    );
    // Uncached input at 100, cached input at 10, output at 400 USD per million tokens.
    const expected = ((MINI.input - MINI.cacheRead) * 100 + MINI.cacheRead * 10 + MINI.output * 400) / 1e6;
    expect(trace.data!.trace.spans[0]!.costSource).toBe('OVERRIDE');
    expect(trace.data!.trace.spans[0]!.costUsd).toBeCloseTo(expected, 9);
    expect(expected).not.toBeCloseTo(expectedLlmCost(recorder.finished()[0]!), 6);

    const removed = await q<{ deleteModelPrice: { id: string } }>(
      'mutation($id: ID!) { deleteModelPrice(id: $id) { id } }',
      { id: set.data!.setModelPrice.id },
      admin,
    );
    expect(removed.data!.deleteModelPrice.id).toBe(set.data!.setModelPrice.id);
    expect(
      (await q<{ modelPrices: unknown[] }>('query($p: ID!) { modelPrices(projectId: $p) { id } }', { p: priced.projectId }, admin)).data!
        .modelPrices,
    ).toEqual([]);
  });

  it('suspects a loop when a tool is called three times with near-identical arguments, and not otherwise', async () => {
    const loops = await h.newProject('loop-tenant');
    const t0 = Date.UTC(2026, 10, 10, 13);
    const turn = (recorder: SpanRecorder, at: number, args: string[]) => {
      const root = recorder.span(
        'agent.run',
        { 'gen_ai.operation.name': 'invoke_agent', 'session.id': 'loops' },
        { start: at, end: at + 1_000 },
      );
      const calls = args.map((a, i) => {
        const call = recorder.span(
          'execute_tool search',
          { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': a },
          { start: at + 10 + i * 200, end: at + 150 + i * 200 },
          root,
        );
        recorder.end(call);
        return call.spanContext().spanId;
      });
      recorder.end(root);
      return { traceId: root.spanContext().traceId, calls };
    };
    const recorder = new SpanRecorder('loop-agent');
    const stuck = turn(recorder, t0, ['{"query":"weather in Lisbon"}', '{"query":"weather in Lisbon"}', '{"query":"weather in  Lisbon"}']);
    const varied = turn(recorder, t0 + 5_000, [
      '{"query":"weather in Lisbon"}',
      '{"query":"flights to Porto"}',
      '{"query":"hotels in Faro"}',
    ]);
    const spans = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, loops.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(loops.projectId, spans.length);
    const ask = async (id: string) => {
      const result = await q<{
        trace: { loopSuspected: boolean; criticalPath: unknown[]; findings: Array<{ kind: string; spanIds: string[] }> };
      }>(
        'query($id: String!) { trace(traceId: $id) { loopSuspected criticalPath { spanId } findings { kind spanIds } } }',
        { id },
        loops.apiKey,
      );
      expect(result.errors).toBeUndefined();
      return result.data!.trace;
    };
    const looping = await ask(stuck.traceId);
    expect(looping.loopSuspected).toBe(true);
    expect(looping.findings.find((f) => f.kind === 'LOOP')?.spanIds.sort()).toEqual([...stuck.calls].sort());
    const fine = await ask(varied.traceId);
    expect(fine.loopSuspected).toBe(false);
    expect(fine.findings.some((f) => f.kind === 'LOOP')).toBe(false);
  });

  /**
   * One agent turn of `children` tool calls under a root, three starting in each millisecond (so
   * pages must split runs of spans that start together), sent in one export.
   */
  const sendWideTrace = async (key: string, projectId: string, children: number, start: number) => {
    const recorder = new SpanRecorder('wide-agent');
    const root = recorder.span(
      'batch.run',
      { 'gen_ai.operation.name': 'invoke_agent', 'session.id': 'wide' },
      { start, end: start + children + 10 },
    );
    for (let i = 0; i < children; i++) {
      const at = start + 1 + Math.floor(i / 3);
      recorder.end(
        recorder.span(
          'execute_tool step',
          { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'step' },
          { start: at, end: at + 2 },
          root,
        ),
      );
    }
    recorder.end(root);
    const sent = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, key), sent))).toBe(true);
    await h.waitForSpans(projectId, sent.length, 60_000);
    return { traceId: root.spanContext().traceId, rootId: root.spanContext().spanId, spanIds: sent.map((s) => s.spanContext().spanId) };
  };
  type SpanPage = { trace: { spans: Array<{ spanId: string; cursor: string }> } };
  /** Every span of a trace through `spans(first, after)`, page by page, with the API key given. */
  const pageThroughSpans = async (traceId: string, first: number, key: string) => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(1_000);
      const page: Awaited<ReturnType<typeof q<SpanPage>>> = await q<SpanPage>(
        'query($id: String!, $first: Int, $after: String) { trace(traceId: $id) { spans(first: $first, after: $after) { spanId cursor } } }',
        { id: traceId, first, after },
        key,
      );
      expect(page.errors).toBeUndefined();
      const spans = page.data!.trace.spans;
      seen.push(...spans.map((s) => s.spanId));
      if (spans.length < first) return seen;
      after = spans.at(-1)!.cursor;
    }
  };

  it('caps the spans one read returns, says so, and pages through every span exactly once', async () => {
    const wide = await h.newProject('wide-trace-tenant');
    const { traceId, rootId, spanIds } = await sendWideTrace(wide.apiKey, wide.projectId, 22, Date.UTC(2026, 10, 16, 9));
    expect(spanIds).toHaveLength(23);
    const inOrder = async () =>
      (
        await h.query<{ span_id: string }>(
          'SELECT span_id FROM spans FINAL WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY start_time, span_id',
          { p: wide.projectId, t: traceId },
        )
      ).map((r) => r.span_id);
    const order = await inOrder();
    expect([...order].sort()).toEqual([...spanIds].sort());

    // TraceService with a cap of 10 on the same ClickHouse: the first 10 in start order, and a flag.
    const db = new ScopedClickHouse(h.services.clickhouse, { tenantId: wide.tenantId, projectId: wide.projectId });
    const capped = new TraceService({ maxSpansPerRead: 10 });
    const read = await capped.reads(db).spans(traceId);
    expect({ truncated: read.truncated, spans: read.records.map((r) => r.span_id) }).toEqual({
      truncated: true,
      spans: order.slice(0, 10),
    });
    // Told without reading the spans (a count up to the cap), and by a read large enough: not truncated.
    expect(await capped.reads(db).truncated(traceId)).toBe(true);
    expect(await new TraceService({ maxSpansPerRead: 23 }).reads(db).truncated(traceId)).toBe(false);
    expect((await new TraceService({ maxSpansPerRead: 23 }).reads(db).spans(traceId)).truncated).toBe(false);
    // Pages of 4 (each read capped at 10) meet every span once, in (start time, span id) order.
    const reads = capped.reads(db);
    const paged: string[] = [];
    let after: string | undefined;
    for (let more = true; more;) {
      const page = await reads.page(traceId, { first: 4, after });
      expect(page.records.length).toBeLessThanOrEqual(4);
      paged.push(...page.records.map((r) => r.span_id));
      more = page.hasNextPage;
      after = page.records.length > 0 ? spanCursor(page.records.at(-1)!) : undefined;
    }
    expect(paged).toEqual(order);
    // The analysis covers the capped read, and its first finding says so.
    const analysis = await reads.analysis({ traceId }, true);
    expect(analysis.spanCount).toBe(10);
    expect(analysis.findings[0]).toMatchObject({ kind: 'SPANS_TRUNCATED', message: expect.stringContaining('first 10 in start order') });
    expect((await new TraceService({ maxSpansPerRead: 23 }).reads(db).analysis({ traceId })).findings.map((f) => f.kind)).not.toContain(
      'SPANS_TRUNCATED',
    );

    // Through GraphQL (cap 10,000): the whole trace, not truncated, and pages of any size meet every span once.
    const whole = await q<{
      trace: { spansTruncated: boolean; spans: Array<{ spanId: string; type: string }>; findings: Array<{ kind: string }> };
    }>(
      'query($id: String!) { trace(traceId: $id) { spansTruncated spans { spanId type } findings { kind } } }',
      { id: traceId.toUpperCase() },
      wide.apiKey,
    );
    expect(whole.errors).toBeUndefined();
    expect(whole.data!.trace.spansTruncated).toBe(false);
    expect(whole.data!.trace.spans.map((s) => s.spanId).sort()).toEqual([...spanIds].sort());
    expect(whole.data!.trace.spans.find((s) => s.spanId === rootId)!.type).toBe('RUN');
    expect(whole.data!.trace.findings.map((f) => f.kind)).not.toContain('SPANS_TRUNCATED');
    for (const first of [1, 4, 22, 23, 100]) expect(await pageThroughSpans(traceId, first, wide.apiKey)).toEqual(order);
    // spansTruncated alone (no spans read) and on a traces page.
    const alone = await q<{ trace: { spansTruncated: boolean } }>(
      'query($id: String!) { trace(traceId: $id) { spansTruncated } }',
      { id: traceId },
      wide.apiKey,
    );
    expect(alone.data).toEqual({ trace: { spansTruncated: false } });
    const listed = await q<{ traces: { nodes: Array<{ spansTruncated: boolean }> } }>(
      '{ traces(first: 5) { nodes { spansTruncated } } }',
      {},
      wide.apiKey,
    );
    expect(listed.data).toEqual({ traces: { nodes: [{ spansTruncated: false }] } });
    // Bad page arguments are the caller's mistake.
    const code = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;
    const pageOf = (args: string) =>
      q(`query($id: String!) { trace(traceId: $id) { spans(${args}) { spanId } } }`, { id: traceId }, wide.apiKey);
    expect(code(await pageOf('first: 0'))).toBe('BAD_USER_INPUT');
    expect(code(await pageOf(`first: ${MAX_SPANS_PER_READ + 1}`))).toBe('BAD_USER_INPUT');
    expect(code(await pageOf('after: "not-a-cursor"'))).toBe('BAD_USER_INPUT');
    const tracesCursor = Buffer.from(JSON.stringify(['1', traceId])).toString('base64url');
    expect(code(await pageOf(`after: "${tracesCursor}"`))).toBe('BAD_USER_INPUT');
  });

  it('says an ordinary trace is not truncated, in spansTruncated, the findings and the waterfall', async () => {
    const { expected } = traces[4]!;
    const result = await q<{ trace: { spansTruncated: boolean; findings: Array<{ kind: string }> } }>(
      'query($id: String!) { trace(traceId: $id) { spansTruncated findings { kind } } }',
      { id: expected.traceId },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace.spansTruncated).toBe(false);
    expect(result.data!.trace.findings.map((f) => f.kind)).not.toContain('SPANS_TRUNCATED');
    const svg = await fetch(`${api}/v1/traces/${expected.traceId}/waterfall.svg`, {
      headers: { authorization: `Bearer ${project.apiKey}` },
    });
    expect(svg.status).toBe(200);
    expect(svg.headers.get('x-spanforge-spans-truncated')).toBe('false');
    expect(await svg.text()).not.toContain('spans only');
  });

  it(`reads at most ${MAX_SPANS_PER_READ.toLocaleString('en-US')} spans of a larger trace, through GraphQL and the waterfall, and pages through the rest`, async () => {
    const huge = await h.newProject('huge-trace-tenant');
    const { traceId, spanIds } = await sendWideTrace(huge.apiKey, huge.projectId, MAX_SPANS_PER_READ + 4, Date.UTC(2026, 10, 17, 9));
    const result = await q<{
      trace: {
        spansTruncated: boolean;
        spans: Array<{ spanId: string }>;
        criticalPath: Array<{ spanId: string }>;
        findings: Array<{ kind: string; message: string }>;
      };
    }>(
      'query($id: String!) { trace(traceId: $id) { spansTruncated spans { spanId } criticalPath { spanId } findings { kind message } } }',
      { id: traceId },
      huge.apiKey,
    );
    expect(result.errors).toBeUndefined();
    const trace = result.data!.trace;
    expect(trace.spansTruncated).toBe(true);
    expect(trace.spans).toHaveLength(MAX_SPANS_PER_READ);
    expect(trace.criticalPath.length).toBeGreaterThan(0);
    expect(trace.findings[0]).toEqual({
      kind: 'SPANS_TRUNCATED',
      message: expect.stringContaining(`first ${MAX_SPANS_PER_READ.toLocaleString('en-US')} in start order`),
    });
    const paged = await pageThroughSpans(traceId, MAX_SPANS_PER_READ, huge.apiKey);
    expect(paged).toHaveLength(spanIds.length);
    expect(new Set(paged).size).toBe(spanIds.length);
    expect([...paged].sort()).toEqual([...spanIds].sort());
    const svg = await fetch(`${api}/v1/traces/${traceId}/waterfall.svg`, { headers: { authorization: `Bearer ${huge.apiKey}` } });
    expect(svg.status).toBe(200);
    expect(svg.headers.get('x-spanforge-spans-truncated')).toBe('true');
    expect(await svg.text()).toContain(`(first ${MAX_SPANS_PER_READ.toLocaleString('en-US')} spans only)`);
  });

  it('reports token sums beyond 32 bits exactly (a month of a busy model)', async () => {
    const busy = await h.newProject('busy-tenant');
    const recorder = new SpanRecorder('busy-agent');
    const t0 = Date.UTC(2026, 10, 10, 14);
    const huge = { ...SONNET, input: 3_000_000_000, output: 2_500_000_000 };
    recordAgentTrace(recorder, { session: 'busy', calls: [huge, huge], start: t0 });
    const spans = recorder.finished();
    const expected = expectedTrace(spans);
    expect(expected.inputTokens).toBeGreaterThan(2 ** 32);
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, busy.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(busy.projectId, spans.length);
    const ask = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const result = await q<T>(query, variables, busy.apiKey);
      expect(result.errors).toBeUndefined();
      return result.data!;
    };
    const trace = await ask<{ trace: { inputTokens: number; outputTokens: number } }>(
      'query($id: String!) { trace(traceId: $id) { inputTokens outputTokens } }',
      { id: expected.traceId },
    );
    expect(trace.trace).toEqual({ inputTokens: expected.inputTokens, outputTokens: expected.outputTokens });
    // Daily costs are the worker's upkeep, written just after the spans: wait for them.
    type Costs = { costBreakdown: Array<{ keys: string[]; inputTokens: number; outputTokens: number }> };
    let cost = await ask<Costs>('{ costBreakdown(groupBy: [MODEL]) { keys inputTokens outputTokens } }');
    for (let i = 0; i < 100 && !cost.costBreakdown.some((r) => r.keys[0] === SONNET.model); i++) {
      await new Promise((r) => setTimeout(r, 100));
      cost = await ask<Costs>('{ costBreakdown(groupBy: [MODEL]) { keys inputTokens outputTokens } }');
    }
    expect(cost.costBreakdown.find((r) => r.keys[0] === SONNET.model)).toEqual({
      keys: [SONNET.model],
      inputTokens: expected.inputTokens,
      outputTokens: expected.outputTokens,
    });
    const models = await ask<{ modelStats: Array<{ model: string; inputTokens: number }> }>('{ modelStats { model inputTokens } }');
    expect(models.modelStats).toEqual([{ model: SONNET.model, inputTokens: expected.inputTokens }]);
  });

  it('pages traces newest first with a total and filters them', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let total = 0;
    do {
      const page: Awaited<
        ReturnType<
          typeof q<{
            traces: {
              nodes: Array<{ traceId: string; startTime: string }>;
              totalCount: number;
              pageInfo: { endCursor: string | null; hasNextPage: boolean };
            };
          }>
        >
      > = await q(
        'query($after: String) { traces(first: 4, after: $after) { nodes { traceId startTime } totalCount pageInfo { endCursor hasNextPage } } }',
        { after },
      );
      expect(page.errors).toBeUndefined();
      seen.push(...page.data!.traces.nodes.map((n) => n.traceId));
      total = page.data!.traces.totalCount;
      after = page.data!.traces.pageInfo.hasNextPage ? page.data!.traces.pageInfo.endCursor : null;
    } while (after);
    expect(total).toBe(traces.length);
    expect(seen).toEqual([...traces].reverse().map((t) => t.expected.traceId));

    // The total is counted only when asked for, directly or through a fragment; the page is the same either way.
    const firstPage = await q<{ traces: { nodes: Array<{ traceId: string }>; totalCount?: number } }>(
      '{ traces(first: 4) { nodes { traceId } } }',
    );
    expect(firstPage.data!.traces).toEqual({ nodes: seen.slice(0, 4).map((traceId) => ({ traceId })) });
    const throughFragment = await q<{ traces: { totalCount: number } }>(
      '{ traces(first: 4) { ...Counted } } fragment Counted on TraceConnection { totalCount }',
    );
    expect(throughFragment.data!.traces.totalCount).toBe(traces.length);

    const count = async (filter: Record<string, unknown>) =>
      (await q<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', { f: filter })).data!
        .traces.totalCount;
    expect(await count({ sessionId: 'beta' })).toBe(traces.filter((t) => t.expected.session === 'beta').length);
    expect(await count({ hasError: true })).toBe(traces.filter((t) => t.expected.errorCount > 0).length);
    expect(await count({ minIterations: 2, maxIterations: 2 })).toBe(traces.filter((t) => t.expected.iterations === 2).length);
    expect(await count({ model: 'claude-3-5-sonnet-20241022' })).toBe(
      plan.filter((p) => p.calls.some((c) => c.model === SONNET.model)).length,
    );
    expect(await count({ from: new Date(base + 2 * 3_600_000).toISOString(), to: new Date(base + 5 * 3_600_000).toISOString() })).toBe(3);
    expect(await count({ attributes: [{ key: 'gen_ai.agent.name', value: 'support' }] })).toBe(traces.length);
    expect(await count({ attributes: [{ key: 'gen_ai.usage.output_tokens', value: String(SONNET.output) }] })).toBe(
      plan.filter((p) => p.calls.some((c) => c.model === SONNET.model)).length,
    );
  });

  it('pages the newest traces exactly however far back the page reaches: minutes, hours, days, or a rare filter', async () => {
    // The first page without a range is read from the newest minutes, in windows of 5 minutes, 2
    // hours and 2 days before the newest (or the cursor's), then the whole project: the traces sit
    // so that pages end in each window and past them all.
    const recent = await h.newProject('newest-traces-tenant');
    const newest = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
    // Two traces start at the same instant of one minute (ordered by trace id), one in the minute after.
    const minutesBack = [0, 1, 1, 3, 30, 100, 600, 1_800, 4_320, 7_200];
    const sent = minutesBack.map((back, i) => {
      const recorder = new SpanRecorder('newest-agent');
      // Two traces in a session of their own: the newest but one and the oldest.
      recordAgentTrace(recorder, {
        session: i === 1 || i === minutesBack.length - 1 ? 'rare' : 'usual',
        calls: [MINI],
        start: newest - back * 60_000 + 7_000,
      });
      return { spans: recorder.finished(), start: newest - back * 60_000 + 7_000 };
    });
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, recent.apiKey);
    for (const trace of sent) expect(exportSucceeded(await exportSpans(exporter, trace.spans))).toBe(true);
    await h.waitForSpans(
      recent.projectId,
      sent.reduce((n, t) => n + t.spans.length, 0),
    );
    // The gateway answers once an export is queued, the figures follow: wait until every trace is listed.
    await until(
      async () =>
        (await q<{ traces: { totalCount: number } }>('{ traces { totalCount } }', {}, recent.apiKey)).data?.traces.totalCount ===
        sent.length,
    );
    const byStart = sent.map((t) => ({
      traceId: expectedTrace(t.spans).traceId,
      start: t.start,
      rare: t.spans.some((s) => s.attributes['session.id'] === 'rare'),
    }));
    const newestFirst = (list: typeof byStart) =>
      [...list].sort((a, b) => b.start - a.start || (a.traceId < b.traceId ? 1 : a.traceId > b.traceId ? -1 : 0)).map((t) => t.traceId);
    type Page = { traces: { nodes: Array<{ traceId: string }>; pageInfo: { endCursor: string | null; hasNextPage: boolean } } };
    const everyPage = async (first: number, filter: Record<string, unknown> = {}) => {
      const seen: string[][] = [];
      let after: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof q<Page>>> = await q<Page>(
          'query($first: Int!, $after: String, $f: TraceFilter) { traces(first: $first, after: $after, filter: $f) { nodes { traceId } pageInfo { endCursor hasNextPage } } }',
          { first, after, f: filter },
          recent.apiKey,
        );
        expect(page.errors).toBeUndefined();
        seen.push(page.data!.traces.nodes.map((n) => n.traceId));
        after = page.data!.traces.pageInfo.hasNextPage ? page.data!.traces.pageInfo.endCursor : null;
      } while (after && seen.length <= byStart.length);
      return seen;
    };
    const inPages = (ids: string[], first: number) =>
      Array.from({ length: Math.ceil(ids.length / first) }, (_, i) => ids.slice(i * first, (i + 1) * first));
    const all = newestFirst(byStart);
    // Pages that end inside the 5-minute window, the 2-hour one, the 2-day one, and past them all.
    for (const first of [1, 2, 3, 5, 7, 9, 20]) expect(await everyPage(first)).toEqual(inPages(all, first));
    // A filter few traces match: one in the newest minutes, the other days back.
    expect(await everyPage(2, { sessionId: 'rare' })).toEqual([newestFirst(byStart.filter((t) => t.rare))]);
    expect(await everyPage(1, { sessionId: 'rare' })).toEqual(inPages(newestFirst(byStart.filter((t) => t.rare)), 1));
    // Everything before a `to` between the fifth and sixth newest, newest first from there: the first
    // page of 2 is the 2-day window before the newest minute under `to`.
    const to = new Date(newest - 50 * 60_000).toISOString();
    expect(await everyPage(2, { to })).toEqual(inPages(newestFirst(byStart.filter((t) => t.start < Date.parse(to))), 2));

    // Which read answers a first page (one trace more than the page is read, to know there is a
    // next): one of 3 is the 5-minute window's, which holds 4 traces; one of 5 the 2-hour window's
    // (6), after the 5-minute one; one of 7 the 2-day window's (8); one of 20 is past every window
    // and the whole project's.
    const pageReads = async (first: number) => {
      const reads = recordedReads(h.services.clickhouse, recent.projectId);
      try {
        const page = await q<Page>('query($first: Int!) { traces(first: $first) { nodes { traceId } } }', { first }, recent.apiKey);
        expect(page.data?.traces.nodes.map((n) => n.traceId)).toEqual(all.slice(0, first));
      } finally {
        reads.stop();
      }
      return reads.names.filter((name) => name.startsWith('query.traces_page'));
    };
    expect(await pageReads(3)).toEqual(['query.traces_page_newest']);
    expect(await pageReads(5)).toEqual(new Array<string>(2).fill('query.traces_page_newest'));
    expect(await pageReads(7)).toEqual(new Array<string>(3).fill('query.traces_page_newest'));
    expect(await pageReads(20)).toEqual([...new Array<string>(3).fill('query.traces_page_newest'), 'query.traces_page']);
  });

  it('answers latencyByIterations with exact percentiles per iteration count', async () => {
    const result = await q<{
      latencyByIterations: Array<{
        iterations: number;
        traceCount: number;
        p50Ms: number;
        p95Ms: number;
        p99Ms: number;
        avgCostUsd: number;
      }>;
    }>('{ latencyByIterations { iterations traceCount p50Ms p95Ms p99Ms avgCostUsd } }');
    expect(result.errors).toBeUndefined();
    const groups = new Map<number, typeof traces>();
    for (const t of traces) groups.set(t.expected.iterations, [...(groups.get(t.expected.iterations) ?? []), t]);
    expect(result.data!.latencyByIterations.map((r) => r.iterations)).toEqual([...groups.keys()].sort());
    for (const row of result.data!.latencyByIterations) {
      const group = groups.get(row.iterations)!;
      const durations = group.map((t) => t.expected.durationMs);
      expect(row.traceCount).toBe(group.length);
      expect(row.p50Ms).toBeCloseTo(percentile(durations, 0.5), 3);
      expect(row.p95Ms).toBeCloseTo(percentile(durations, 0.95), 3);
      expect(row.p99Ms).toBeCloseTo(percentile(durations, 0.99), 3);
      expect(row.avgCostUsd).toBeCloseTo(group.reduce((s, t) => s + t.expected.costUsd, 0) / group.length, 9);
    }
  });

  it('answers sessions, most expensive first, each the sum of its traces', async () => {
    const result = await q<{
      sessions: {
        nodes: Array<{
          sessionId: string;
          traceCount: number;
          costUsd: number;
          inputTokens: number;
          outputTokens: number;
          firstSeen: string;
          feedback: unknown[];
        }>;
        totalCount: number;
      };
    }>(
      '{ sessions { nodes { sessionId traceCount costUsd inputTokens outputTokens firstSeen lastSeen feedback { name count avg } } totalCount } }',
    );
    expect(result.errors).toBeUndefined();
    const expected = ['alpha', 'beta']
      .map((session) => {
        const own = traces.filter((t) => t.expected.session === session);
        return {
          sessionId: session,
          traceCount: own.length,
          costUsd: own.reduce((s, t) => s + t.expected.costUsd, 0),
          inputTokens: own.reduce((s, t) => s + t.expected.inputTokens, 0),
          outputTokens: own.reduce((s, t) => s + t.expected.outputTokens, 0),
        };
      })
      .sort((a, b) => b.costUsd - a.costUsd);
    expect(result.data!.sessions.totalCount).toBe(2);
    expect(result.data!.sessions.nodes.map((n) => n.sessionId)).toEqual(expected.map((e) => e.sessionId));
    // Without totalCount (not counted) the page is the same.
    const uncounted = await q<{ sessions: { nodes: Array<{ sessionId: string }> } }>('{ sessions { nodes { sessionId } } }');
    expect(uncounted.data!.sessions).toEqual({ nodes: expected.map((e) => ({ sessionId: e.sessionId })) });
    result.data!.sessions.nodes.forEach((node, i) => {
      expect(node).toMatchObject({
        traceCount: expected[i]!.traceCount,
        inputTokens: expected[i]!.inputTokens,
        outputTokens: expected[i]!.outputTokens,
        feedback: [],
      });
      expect(node.costUsd).toBeCloseTo(expected[i]!.costUsd, 9);
    });
    const firstPage = await q<{ sessions: { nodes: Array<{ sessionId: string }>; pageInfo: { endCursor: string; hasNextPage: boolean } } }>(
      '{ sessions(first: 1) { nodes { sessionId } pageInfo { endCursor hasNextPage } } }',
    );
    expect(firstPage.data!.sessions.pageInfo.hasNextPage).toBe(true);
    const second = await q<{ sessions: { nodes: Array<{ sessionId: string }>; pageInfo: { hasNextPage: boolean } } }>(
      'query($a: String) { sessions(first: 1, after: $a) { nodes { sessionId } pageInfo { hasNextPage } } }',
      { a: firstPage.data!.sessions.pageInfo.endCursor },
    );
    expect(second.data!.sessions.nodes.map((n) => n.sessionId)).toEqual([expected[1]!.sessionId]);
    expect(second.data!.sessions.pageInfo.hasNextPage).toBe(false);
  });

  it('answers costBreakdown by model and by model and day', async () => {
    const byModel = new Map<string, { cost: number; input: number; output: number; spans: number }>();
    for (const { spans } of traces) {
      for (const span of spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')) {
        const model = String(span.attributes['gen_ai.response.model']);
        const entry = byModel.get(model) ?? { cost: 0, input: 0, output: 0, spans: 0 };
        entry.input += Number(span.attributes['gen_ai.usage.input_tokens']);
        entry.output += Number(span.attributes['gen_ai.usage.output_tokens']);
        entry.spans += 1;
        entry.cost += expectedLlmCost(span);
        byModel.set(model, entry);
      }
    }
    const result = await q<{
      costBreakdown: Array<{ keys: string[]; costUsd: number; inputTokens: number; outputTokens: number; spanCount: number }>;
    }>('{ costBreakdown(groupBy: [MODEL]) { keys costUsd inputTokens outputTokens spanCount } }');
    expect(result.errors).toBeUndefined();
    const rows = result.data!.costBreakdown.filter((r) => r.keys[0] !== '');
    expect(rows.map((r) => r.keys[0]).sort()).toEqual([...byModel.keys()].sort());
    for (const row of rows) {
      const want = byModel.get(row.keys[0]!)!;
      expect(row).toMatchObject({ inputTokens: want.input, outputTokens: want.output, spanCount: want.spans });
      expect(row.costUsd).toBeCloseTo(want.cost, 9);
    }
    const alphaInput = traces.filter((t) => t.expected.session === 'alpha').reduce((n, t) => n + t.expected.inputTokens, 0);
    const alpha = await q<{ costBreakdown: Array<{ inputTokens: number }> }>(
      'query($f: TraceFilter) { costBreakdown(groupBy: [SESSION], filter: $f) { keys inputTokens } }',
      { f: { sessionId: 'alpha', from: new Date(base - 1).toISOString(), to: new Date(base + 24 * 3_600_000).toISOString() } },
    );
    expect(alpha.errors).toBeUndefined();
    expect(alpha.data!.costBreakdown).toEqual([{ keys: ['alpha'], inputTokens: alphaInput }]);
    const byDay = await q<{ costBreakdown: Array<{ keys: string[] }> }>('{ costBreakdown(groupBy: [MODEL, DAY]) { keys costUsd } }');
    expect(byDay.data!.costBreakdown.filter((r) => r.keys[0] !== '').every((r) => r.keys[1] === '2026-11-10')).toBe(true);
  });

  it('answers costBreakdown for ranges that do not start or end at midnight: whole days, part days at the ends, part of one day', async () => {
    const ranged = await h.newProject('part-days-tenant');
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, ranged.apiKey);
    const day = (d: number, hour: number) => Date.UTC(2026, 10, 20 + d, hour);
    // Traces by start: before the range, in its first part day, on its whole day, in its last part day, after it.
    const starts = [day(0, 10), day(0, 22), day(1, 3), day(1, 15), day(2, 3), day(2, 20)];
    const sent: ReadableSpan[][] = [];
    for (const [i, start] of starts.entries()) {
      const recorder = new SpanRecorder('ranged-agent');
      recordAgentTrace(recorder, { session: `ranged-${i}`, calls: i % 2 === 0 ? [MINI] : [SONNET, MINI], start });
      sent.push(recorder.finished());
    }
    expect(exportSucceeded(await exportSpans(exporter, sent.flat()))).toBe(true);
    await h.waitForSpans(ranged.projectId, sent.flat().length);
    // Expected from the spans sent: the LLM calls of the traces starting in [from, to), by model and the day their trace started.
    const expectedFor = (from: number, to: number) => {
      const want = new Map<string, { cost: number; input: number; spans: number }>();
      for (const [i, spans] of sent.entries()) {
        if (starts[i]! < from || starts[i]! >= to) continue;
        for (const span of spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')) {
          const key = `${String(span.attributes['gen_ai.response.model'])}|${new Date(starts[i]!).toISOString().slice(0, 10)}`;
          const entry = want.get(key) ?? { cost: 0, input: 0, spans: 0 };
          entry.cost += expectedLlmCost(span);
          entry.input += Number(span.attributes['gen_ai.usage.input_tokens']);
          entry.spans += 1;
          want.set(key, entry);
        }
      }
      return want;
    };
    type Rows = { costBreakdown: Array<{ keys: string[]; costUsd: number; inputTokens: number; spanCount: number }> };
    const ask = async (filter: Record<string, unknown>) => {
      const result = await q<Rows>(
        'query($f: TraceFilter) { costBreakdown(groupBy: [MODEL, DAY], filter: $f) { keys costUsd inputTokens spanCount } }',
        { f: filter },
        ranged.apiKey,
      );
      expect(result.errors).toBeUndefined();
      return result.data!.costBreakdown.filter((r) => r.keys[0] !== '');
    };
    await until(
      async () =>
        (await ask({})).reduce((n, r) => n + r.spanCount, 0) ===
        sent.flat().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').length,
    );
    // Whole days with a part day at each end; no whole day, two part days; part of one day.
    for (const [from, to] of [
      [day(0, 21), day(2, 12)],
      [day(0, 21), day(1, 5)],
      [day(1, 2), day(1, 4)],
    ] as const) {
      const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
      const want = expectedFor(from, to);
      const rows = await ask(range);
      expect(rows.map((r) => r.keys.join('|')).sort()).toEqual([...want.keys()].sort());
      for (const row of rows) {
        const expected = want.get(row.keys.join('|'))!;
        expect(row).toMatchObject({ inputTokens: expected.input, spanCount: expected.spans });
        expect(row.costUsd).toBeCloseTo(expected.cost, 9);
      }
      // The same answer as the path every other filter takes (per-trace cost rows only).
      expect(await ask({ ...range, minIterations: 0 })).toEqual(rows);
    }
    // Bounds beyond the days ClickHouse holds are every trace, not a wrapped-around day.
    const everything = await ask({ from: '1900-01-01T00:00:00Z', to: '2999-12-31T12:00:00Z' });
    expect(everything.reduce((n, r) => n + r.spanCount, 0)).toBe(
      sent.flat().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').length,
    );
    expect(everything).toEqual(await ask({}));
  });

  it('counts a trace that turns out to start the day before on that day only, once, and keeps it off the later day', async () => {
    const midnight = Date.UTC(2026, 10, 12);
    const late = await h.newProject('midnight-tenant');
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, late.apiKey);
    const recorder = new SpanRecorder('midnight-agent');
    // Three iterations of 500 ms from 600 ms before midnight: the last one starts after midnight.
    recordAgentTrace(recorder, { session: 'night', calls: [MINI, SONNET, MINI], start: midnight - 600 });
    const spans = recorder.finished();
    const expectedCost = spans
      .filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
      .reduce((sum, s) => sum + expectedLlmCost(s), 0);
    const startsAfterMidnight = (s: ReadableSpan) => toNs(s.startTime) >= midnight * 1e6;
    const wholeDays = { from: new Date(midnight - 86_400_000).toISOString(), to: new Date(midnight + 86_400_000).toISOString() };
    const byDay = (filter: Record<string, string>) => costByDay(filter, late.apiKey);
    // First the spans after midnight, alone: as far as the store knows, the trace starts on the 12th.
    const first = spans.filter(startsAfterMidnight);
    expect(exportSucceeded(await exportSpans(exporter, first))).toBe(true);
    await until(async () => (await byDay(wholeDays)).some((r) => r.keys[0] === '2026-11-12'));
    expect((await byDay(wholeDays)).map((r) => r.keys[0])).toEqual(['2026-11-12']);
    // Then the rest, root included: the trace starts on the 11th, and all of its cost belongs there.
    expect(
      exportSucceeded(
        await exportSpans(
          exporter,
          spans.filter((s) => !startsAfterMidnight(s)),
        ),
      ),
    ).toBe(true);
    await h.waitForSpans(late.projectId, spans.length);
    await until(async () => (await byDay(wholeDays)).every((r) => r.keys[0] === '2026-11-11'));
    const daily = await byDay(wholeDays);
    expect(daily.map((r) => r.keys[0])).toEqual(['2026-11-11']);
    expect(daily[0]!.costUsd).toBeCloseTo(expectedCost, 9);
    // The per-trace path (a range that is not whole days) agrees.
    const perTrace = await byDay({ ...wholeDays, from: new Date(midnight - 86_400_000 + 1).toISOString() });
    expect(perTrace).toHaveLength(1);
    expect(perTrace[0]).toMatchObject({ keys: ['2026-11-11'] });
    expect(perTrace[0]!.costUsd).toBeCloseTo(expectedCost, 9);
    // A later trace on the 12th alone has only that day recomputed: the first trace stays gone from it.
    const next = new SpanRecorder('midnight-agent');
    recordAgentTrace(next, { session: 'morning', calls: [SONNET], start: midnight + 3_600_000 });
    const nextSpans = next.finished();
    const nextCost = nextSpans
      .filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
      .reduce((sum, s) => sum + expectedLlmCost(s), 0);
    expect(exportSucceeded(await exportSpans(exporter, nextSpans))).toBe(true);
    await until(async () => (await byDay(wholeDays)).some((r) => r.keys[0] === '2026-11-12'));
    const afterNext = await byDay(wholeDays);
    expect(afterNext.map((r) => r.keys[0]).sort()).toEqual(['2026-11-11', '2026-11-12']);
    expect(afterNext.find((r) => r.keys[0] === '2026-11-11')!.costUsd).toBeCloseTo(expectedCost, 9);
    expect(afterNext.find((r) => r.keys[0] === '2026-11-12')!.costUsd).toBeCloseTo(nextCost, 9);
  });

  it('moves a trace whose start turns out to be more than a year earlier to that day, whole', async () => {
    const late = await h.newProject('skewed-tenant');
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, late.apiKey);
    const recorder = new SpanRecorder('skewed-agent');
    const today = Date.UTC(2026, 10, 11, 12);
    const early = Date.UTC(2025, 0, 1, 12); // 679 days before
    recordAgentTrace(recorder, { session: 'skew', calls: [MINI, SONNET], start: today });
    const spans = recorder.finished();
    const root = spans.find((s) => !s.parentSpanContext)!;
    // A span of the same trace from a client whose clock was far behind, sent afterwards.
    const skewed = new SpanRecorder('skewed-agent');
    const parent = trace.wrapSpanContext(root.spanContext());
    const stray = skewed.span(
      'execute_tool warmup',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'warmup' },
      { start: early, end: early + 5 },
      parent,
    );
    skewed.end(stray);
    const expectedCost = spans
      .filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
      .reduce((sum, s) => sum + expectedLlmCost(s), 0);
    const range = { from: '2024-12-01T00:00:00Z', to: '2026-12-01T00:00:00Z' };
    const byDay = () => costByDay(range, late.apiKey);
    expect(exportSucceeded(await exportSpans(exporter, spans))).toBe(true);
    await until(async () => (await byDay()).some((r) => r.keys[0] === '2026-11-11'));
    expect((await byDay()).map((r) => r.keys[0])).toEqual(['2026-11-11']);
    expect(exportSucceeded(await exportSpans(exporter, skewed.finished()))).toBe(true);
    await h.waitForSpans(late.projectId, spans.length + 1);
    await until(async () => (await byDay()).every((r) => r.keys[0] === '2025-01-01'));
    const daily = await byDay();
    expect(daily.map((r) => r.keys[0])).toEqual(['2025-01-01']);
    expect(daily[0]!.costUsd).toBeCloseTo(expectedCost, 9);
  });

  it('keeps the figures of a trace that runs for days whole when only its newest span comes in', async () => {
    const start = Date.UTC(2026, 10, 14, 10);
    const later = await h.newProject('multi-day-tenant');
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, later.apiKey);
    const recorder = new SpanRecorder('long-agent');
    const llm = (call: LlmCall, at: number, parent: Span) =>
      recorder.span(
        `chat ${call.model}`,
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': call.provider,
          'gen_ai.request.model': call.model,
          'gen_ai.response.model': call.model,
          'gen_ai.usage.input_tokens': call.input,
          'gen_ai.usage.cache_read.input_tokens': call.cacheRead,
          'gen_ai.usage.output_tokens': call.output,
        },
        { start: at, end: at + 400 },
        parent,
      );
    // A run of two days and two hours: one LLM call at its start, one two days later.
    const root = recorder.span(
      'workflow.run',
      { 'session.id': 'long', 'gen_ai.operation.name': 'invoke_agent' },
      { start, end: start + 50 * 3_600_000 },
    );
    const early = llm(MINI, start + 1_000, root);
    recorder.end(early);
    recorder.end(root);
    const late = llm(SONNET, start + 48 * 3_600_000, root);
    recorder.end(late);
    const [earlySpan, rootSpan, lateSpan] = recorder.finished();
    const traceId = rootSpan!.spanContext().traceId;
    const expectedCost = expectedLlmCost(earlySpan!) + expectedLlmCost(lateSpan!);
    const figures = async () => {
      const result = await q<{ trace: { rootName: string; startTime: string; costUsd: number; inputTokens: number } | null }>(
        'query($id: String!) { trace(traceId: $id) { rootName startTime costUsd inputTokens } }',
        { id: traceId },
        later.apiKey,
      );
      expect(result.errors).toBeUndefined();
      return result.data!.trace;
    };
    expect(exportSucceeded(await exportSpans(exporter, [earlySpan!, rootSpan!]))).toBe(true);
    await until(async () => (await figures())?.costUsd !== undefined);
    // The newest span alone, two days on: the round that writes it must still read the trace's first day.
    expect(exportSucceeded(await exportSpans(exporter, [lateSpan!]))).toBe(true);
    await h.waitForSpans(later.projectId, 3);
    await until(async () => Math.abs(((await figures())?.costUsd ?? 0) - expectedCost) < 1e-9);
    const trace = (await figures())!;
    expect(trace).toMatchObject({
      rootName: 'workflow.run',
      startTime: new Date(start).toISOString(),
      inputTokens: MINI.input + SONNET.input,
    });
    expect(trace.costUsd).toBeCloseTo(expectedCost, 9);
  });

  it('answers spanTypeStats, modelStats and ingestStats from the spans sent', async () => {
    const all = traces.flatMap((t) => t.spans);
    const types = await q<{ spanTypeStats: Array<{ type: string; spanCount: number; errorRate: number; p50Ms: number }> }>(
      '{ spanTypeStats { type spanCount errorRate p50Ms p95Ms p99Ms } }',
    );
    expect(types.errors).toBeUndefined();
    const expectedTypes: Record<string, ReadableSpan[]> = {};
    for (const span of all) {
      const type = !span.parentSpanContext
        ? 'RUN'
        : ({ chat: 'LLM', invoke_agent: 'AGENT', execute_tool: 'TOOL' } as Record<string, string>)[
            String(span.attributes['gen_ai.operation.name'])
          ]!;
      (expectedTypes[type] ??= []).push(span);
    }
    expect(Object.fromEntries(types.data!.spanTypeStats.map((r) => [r.type, r.spanCount]))).toEqual(
      Object.fromEntries(Object.entries(expectedTypes).map(([t, spans]) => [t, spans.length])),
    );
    const llm = types.data!.spanTypeStats.find((r) => r.type === 'LLM')!;
    expect(llm.errorRate).toBeCloseTo(expectedTypes.LLM!.filter((s) => s.status.code === 2).length / expectedTypes.LLM!.length, 9);
    const toMs = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expectSketched(
      llm.p50Ms,
      rankPercentile(
        expectedTypes.LLM!.map((s) => toMs(s.endTime) - toMs(s.startTime)),
        0.5,
      ),
    );

    const models = await q<{
      modelStats: Array<{ model: string; calls: number; inputTokens: number; outputTokens: number; costUsd: number }>;
    }>('{ modelStats { model calls inputTokens outputTokens costUsd ttftP50Ms outputTokensPerSecond } }');
    expect(models.errors).toBeUndefined();
    for (const row of models.data!.modelStats) {
      const calls = expectedTypes.LLM!.filter((s) => s.attributes['gen_ai.response.model'] === row.model);
      expect(row.calls).toBe(calls.length);
      expect(row.inputTokens).toBe(calls.reduce((n, s) => n + Number(s.attributes['gen_ai.usage.input_tokens']), 0));
      expect(row.outputTokens).toBe(calls.reduce((n, s) => n + Number(s.attributes['gen_ai.usage.output_tokens']), 0));
      expect(row.costUsd).toBeCloseTo(
        calls.reduce((n, s) => n + expectedLlmCost(s), 0),
        9,
      );
    }
    expect(models.data!.modelStats.map((r) => r.model).sort()).toEqual([MINI.model, SONNET.model].sort());

    // Accounting rows are written in their own batches (within a second): wait for them.
    type Minutes = { ingestStats: Array<{ received: number; accepted: number; rejected: number }> };
    let ingest = await q<Minutes>(
      '{ ingestStats { minute received accepted rejected rateLimited refused rejectedByReason { reason spans } } }',
    );
    for (let i = 0; i < 50 && ingest.data!.ingestStats.reduce((n, m) => n + m.accepted, 0) < all.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ingest = await q<Minutes>('{ ingestStats { minute received accepted rejected } }');
    }
    expect(ingest.errors).toBeUndefined();
    expect(ingest.data!.ingestStats.reduce((n, m) => n + m.received, 0)).toBe(all.length);
    expect(ingest.data!.ingestStats.reduce((n, m) => n + m.accepted, 0)).toBe(all.length);
    // A time range picks the minutes in it: all of them from an hour ago to a minute ahead, none from the day before.
    const ranged = async (from: number, to: number) =>
      q<Minutes>('query($r: TimeRange) { ingestStats(filter: $r) { minute received accepted } }', {
        r: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
      });
    const recent = await ranged(Date.now() - 3_600_000, Date.now() + 60_000);
    expect(recent.errors).toBeUndefined();
    expect(recent.data!.ingestStats.reduce((n, m) => n + m.received, 0)).toBe(all.length);
    const dayBefore = await ranged(Date.now() - 2 * 86_400_000, Date.now() - 86_400_000);
    expect(dayBefore.errors).toBeUndefined();
    expect(dayBefore.data!.ingestStats).toEqual([]);
  });

  it('answers spanTypeStats and modelStats for the traces a filter matches, with percentiles, TTFT and throughput', async () => {
    const stats = await h.newProject('stats-tenant');
    const recorder = new SpanRecorder('stats-agent');
    const t0 = Date.UTC(2026, 10, 10, 15);
    // Two users' sessions; each trace a root, two streamed LLM calls of varied length and TTFT, and a tool.
    for (const [u, session] of ['fast', 'slow'].entries()) {
      for (let i = 0; i < 4; i++) {
        const at = t0 + (u * 4 + i) * 10_000;
        const root = recorder.span(
          `turn-${session}`,
          { 'session.id': session, 'user.id': `user-${session}`, 'gen_ai.operation.name': 'invoke_agent' },
          { start: at, end: at + 5_000 },
        );
        // The last slow turn calls one model only, so a model filter leaves it out.
        for (const [j, call] of (u === 1 && i === 3 ? [MINI] : [MINI, SONNET]).entries()) {
          const length = 200 + 97 * i + 31 * j + u * 900;
          const llm = recorder.span(
            `chat ${call.model}`,
            {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': call.provider,
              'gen_ai.request.model': call.model,
              'gen_ai.response.model': call.model,
              'gen_ai.usage.input_tokens': call.input,
              'gen_ai.usage.output_tokens': 50 + 10 * i + u * 100,
              'gen_ai.response.time_to_first_chunk': 0.05 + 0.013 * i + 0.2 * u + 0.007 * j,
            },
            { start: at + 10 + j * 2_000, end: at + 10 + j * 2_000 + length },
            root,
          );
          recorder.end(llm);
        }
        const tool = recorder.span(
          'execute_tool lookup',
          { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
          { start: at + 4_000, end: at + 4_000 + 20 + 5 * i },
          root,
        );
        recorder.end(tool);
        recorder.end(root);
      }
    }
    const spans = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, stats.apiKey), spans))).toBe(
      true,
    );
    await h.waitForSpans(stats.projectId, spans.length);
    // Trace filters read the per-trace figures, which the worker's upkeep writes just after the spans.
    const total = async () =>
      (await q<{ traces: { totalCount: number } }>('{ traces { totalCount } }', {}, stats.apiKey)).data!.traces.totalCount;
    for (let i = 0; i < 100 && (await total()) < 8; i++) await new Promise((r) => setTimeout(r, 100));
    const ms = (s: ReadableSpan) => (toNs(s.endTime) - toNs(s.startTime)) / 1e6;
    const sessionOf = (s: ReadableSpan) => {
      const root = spans.find((r) => !r.parentSpanContext && r.spanContext().traceId === s.spanContext().traceId)!;
      return root.attributes['session.id'];
    };
    const typeOf = (s: ReadableSpan) => (!s.parentSpanContext ? 'RUN' : s.attributes['gen_ai.operation.name'] === 'chat' ? 'LLM' : 'TOOL');
    const ask = async <T>(query: string, f: Record<string, unknown> = {}) => {
      const result = await q<T>(query, { f }, stats.apiKey);
      expect(result.errors).toBeUndefined();
      return result.data!;
    };
    const models = (s: ReadableSpan) =>
      spans.filter((c) => c.spanContext().traceId === s.spanContext().traceId).map((c) => c.attributes['gen_ai.response.model']);
    // `from` inside the first turn: its root started before, its LLM calls after.
    const midFirstTurn = new Date(t0 + 5).toISOString();
    type StatsFilter = { sessionId?: string; userId?: string; rootName?: string; model?: string; from?: string };
    const filters: StatsFilter[] = [
      {},
      { sessionId: 'slow' },
      { userId: 'user-fast' },
      { rootName: 'turn-slow', model: SONNET.model },
      { from: midFirstTurn, sessionId: 'fast' },
    ];
    for (const filter of filters) {
      // The range is on the spans; the rest picks traces, whenever they started.
      const traceMatches = (s: ReadableSpan) =>
        (!filter.sessionId || sessionOf(s) === filter.sessionId) &&
        (!filter.userId || `user-${String(sessionOf(s))}` === filter.userId) &&
        (!filter.rootName || `turn-${String(sessionOf(s))}` === filter.rootName) &&
        (!filter.model || models(s).includes(filter.model));
      const matches = (s: ReadableSpan) => traceMatches(s) && (!filter.from || toNs(s.startTime) >= Date.parse(filter.from) * 1e6);
      const chosen = spans.filter(matches);
      const byType = await ask<{ spanTypeStats: Array<{ type: string; spanCount: number; p50Ms: number; p95Ms: number; p99Ms: number }> }>(
        'query($f: TraceFilter) { spanTypeStats(filter: $f) { type spanCount p50Ms p95Ms p99Ms } }',
        filter,
      );
      const expectedTypes = [...new Set(chosen.map(typeOf))].sort();
      expect(byType.spanTypeStats.map((r) => r.type).sort()).toEqual(expectedTypes);
      for (const row of byType.spanTypeStats) {
        const durations = chosen.filter((s) => typeOf(s) === row.type).map(ms);
        expect({ filter, type: row.type, spanCount: row.spanCount }).toEqual({ filter, type: row.type, spanCount: durations.length });
        for (const [field, p] of [
          ['p50Ms', 0.5],
          ['p95Ms', 0.95],
          ['p99Ms', 0.99],
        ] as const)
          expectSketched(row[field], rankPercentile(durations, p));
      }
      const byModel = await ask<{
        modelStats: Array<{ model: string; calls: number; ttftP50Ms: number; ttftP95Ms: number; outputTokensPerSecond: number }>;
      }>('query($f: TraceFilter) { modelStats(filter: $f) { model calls ttftP50Ms ttftP95Ms outputTokensPerSecond } }', filter);
      const llms = chosen.filter((s) => typeOf(s) === 'LLM');
      expect(byModel.modelStats.map((r) => r.model).sort()).toEqual(
        [...new Set(llms.map((s) => String(s.attributes['gen_ai.response.model'])))].sort(),
      );
      for (const row of byModel.modelStats) {
        const calls = llms.filter((s) => s.attributes['gen_ai.response.model'] === row.model);
        const ttft = calls.map((s) => Number(s.attributes['gen_ai.response.time_to_first_chunk']) * 1000);
        expect(row.calls).toBe(calls.length);
        expectSketched(row.ttftP50Ms, rankPercentile(ttft, 0.5));
        expectSketched(row.ttftP95Ms, rankPercentile(ttft, 0.95));
        // Output tokens over generation time: each call's duration after its first token.
        const generating = calls.reduce((n, s, i) => n + Math.max(ms(s) / 1000 - ttft[i]! / 1000, 0), 0);
        expect(row.outputTokensPerSecond).toBeCloseTo(
          calls.reduce((n, s) => n + Number(s.attributes['gen_ai.usage.output_tokens']), 0) / generating,
          3,
        );
      }
      // A traces page takes the range on the traces' own start.
      const traceCount = (
        await ask<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', filter)
      ).traces.totalCount;
      const roots = spans.filter(
        (s) => !s.parentSpanContext && traceMatches(s) && (!filter.from || toNs(s.startTime) >= Date.parse(filter.from) * 1e6),
      );
      expect({ filter, traceCount }).toEqual({ filter, traceCount: roots.length });
    }
  });

  it('shows another project nothing, through every query, cursor and filter', async () => {
    const id = traces[0]!.expected.traceId;
    const asOther = <T>(query: string, variables: Record<string, unknown> = {}) => q<T>(query, variables, other.apiKey);
    expect((await asOther<{ trace: null }>('query($id: String!) { trace(traceId: $id) { traceId } }', { id })).data!.trace).toBeNull();
    // A span that exists: its owner reads it, the other project gets nothing.
    const spanId = traces[0]!.spans[0]!.spanContext().spanId;
    const detail = 'query($id: String!, $span: String!) { spanDetail(traceId: $id, spanId: $span) { spanId } }';
    expect((await q<{ spanDetail: { spanId: string } }>(detail, { id, span: spanId })).data!.spanDetail).toEqual({ spanId });
    expect((await asOther<{ spanDetail: null }>(detail, { id, span: spanId })).data!.spanDetail).toBeNull();
    const own = await asOther<{ traces: { nodes: Array<{ traceId: string }>; totalCount: number } }>(
      '{ traces { nodes { traceId } totalCount } }',
    );
    expect(own.data!.traces.totalCount).toBe(1);
    expect(own.data!.traces.nodes.map((n) => n.traceId)).not.toContain(id);
    const firstPage = await q<{ traces: { pageInfo: { endCursor: string } } }>('{ traces(first: 1) { pageInfo { endCursor } } }');
    const viaCursor = await asOther<{ traces: { nodes: Array<{ traceId: string }> } }>(
      'query($a: String) { traces(after: $a) { nodes { traceId } } }',
      { a: firstPage.data!.traces.pageInfo.endCursor },
    );
    expect(viaCursor.data!.traces.nodes.every((n) => !traces.some((t) => t.expected.traceId === n.traceId))).toBe(true);
    const sessions = await asOther<{ sessions: { nodes: Array<{ traceCount: number }> } }>(
      '{ sessions { nodes { sessionId traceCount } } }',
    );
    expect(sessions.data!.sessions.nodes).toEqual([{ sessionId: 'alpha', traceCount: 1 }]);
    const latency = await asOther<{ latencyByIterations: Array<{ traceCount: number }> }>('{ latencyByIterations { traceCount } }');
    expect(latency.data!.latencyByIterations.reduce((n, r) => n + r.traceCount, 0)).toBe(1);
    const cost = await asOther<{ costBreakdown: Array<{ keys: string[]; spanCount: number }> }>(
      '{ costBreakdown(groupBy: [MODEL]) { keys spanCount } }',
    );
    expect(cost.data!.costBreakdown.filter((r) => r.keys[0] !== '')).toEqual([{ keys: [SONNET.model], spanCount: 1 }]);
    const stats = await asOther<{ modelStats: Array<{ calls: number }>; spanTypeStats: Array<{ spanCount: number }> }>(
      '{ modelStats { calls } spanTypeStats { spanCount } }',
    );
    expect(stats.data!.modelStats).toEqual([{ calls: 1 }]);
    expect(stats.data!.spanTypeStats.reduce((n, r) => n + r.spanCount, 0)).toBe(4);
    // Filters that match the first project's traces (checked with its key) match nothing of theirs.
    const count = async (f: Record<string, unknown>, key?: string) =>
      (await q<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', { f }, key)).data!.traces
        .totalCount;
    const betaTraces = plan.filter((p) => p.session === 'beta').length;
    expect(await count({ sessionId: 'beta' })).toBe(betaTraces);
    expect(await count({ sessionId: 'beta' }, other.apiKey)).toBe(0);
    expect(await count({ attributes: [{ key: 'session.id', value: 'beta' }] })).toBe(betaTraces);
    expect(await count({ attributes: [{ key: 'session.id', value: 'beta' }] }, other.apiKey)).toBe(0);
    const scored = await fetch(`${api}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
      body: JSON.stringify({ traceId: id, name: 'isolation', value: 5 }),
    });
    expect(scored.status).toBe(202);
    expect(await count({ feedback: { name: 'isolation' } })).toBe(1);
    expect(await count({ feedback: { name: 'isolation' } }, other.apiKey)).toBe(0);
    const scoredSessions = await asOther<{ sessions: { nodes: unknown[] } }>(
      'query($f: SessionFilter) { sessions(filter: $f) { nodes { sessionId } } }',
      { f: { feedback: { name: 'isolation' } } },
    );
    expect(scoredSessions.data!.sessions.nodes).toEqual([]);
    // A sessions cursor from the first project leads the other nowhere into it.
    const sessionPage = await q<{ sessions: { pageInfo: { endCursor: string } } }>('{ sessions(first: 1) { pageInfo { endCursor } } }');
    const viaSessionCursor = await asOther<{ sessions: { nodes: Array<{ sessionId: string; traceCount: number }> } }>(
      'query($a: String) { sessions(after: $a) { nodes { sessionId traceCount } } }',
      { a: sessionPage.data!.sessions.pageInfo.endCursor },
    );
    expect(viaSessionCursor.errors).toBeUndefined();
    expect(viaSessionCursor.data!.sessions.nodes.every((n) => n.sessionId === 'alpha' && n.traceCount === 1)).toBe(true);
    // Ingest accounting: only their own spans (its rows are written after the spans, so wait for them).
    type Minutes = { ingestStats: Array<{ received: number; accepted: number }> };
    const theirs = async () => (await asOther<Minutes>('{ ingestStats { received accepted } }')).data!.ingestStats;
    const total = (minutes: Minutes['ingestStats'], field: 'received' | 'accepted') => minutes.reduce((n, m) => n + m[field], 0);
    let theirIngest = await theirs();
    for (let i = 0; i < 50 && total(theirIngest, 'accepted') < 4; i++) {
      await new Promise((r) => setTimeout(r, 100));
      theirIngest = await theirs();
    }
    expect({ received: total(theirIngest, 'received'), accepted: total(theirIngest, 'accepted') }).toEqual({ received: 4, accepted: 4 });
  });

  it('refuses hostile or unauthenticated queries with a clear code', async () => {
    const code = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;
    const none = await graphql(api, '{ traces { totalCount } }');
    expect(none.data).toBeNull();
    expect(code(none)).toBe('UNAUTHENTICATED');
    const asAdmin = await q('{ traces { totalCount } }', {}, h.services.adminToken!);
    expect(asAdmin.data).toBeNull();
    expect(code(asAdmin)).toBe('UNAUTHENTICATED');
    expect(asAdmin.errors![0]!.message).toMatch(/admin token manages tenants, projects and keys/);
    expect(code(await q('{ traces(first: 1000000) { totalCount } }'))).toBe('BAD_USER_INPUT');
    expect(code(await q('{ trace(traceId: "\' OR 1=1 --") { traceId } }'))).toBe('BAD_USER_INPUT');
    const sqlish = await q<{ traces: { totalCount: number } }>('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', {
      f: { sessionId: "beta' OR '1'='1", attributes: [{ key: "x'] = '' OR 1=1 --", value: "' OR ''='" }] },
    });
    expect(sqlish.errors).toBeUndefined();
    expect(sqlish.data!.traces.totalCount).toBe(0);
    expect(code(await q('{ traces(after: "not-a-cursor") { totalCount } }'))).toBe('BAD_USER_INPUT');
    expect(code(await q('{ costBreakdown(groupBy: []) { keys } }'))).toBe('BAD_USER_INPUT');
    // Ranges that cannot hold anything are mistakes, said so rather than answered with nothing.
    const backwards = await q('{ traces(filter: { minIterations: 5, maxIterations: 1 }) { totalCount } }');
    expect(code(backwards)).toBe('BAD_USER_INPUT');
    expect(backwards.errors![0]!.message).toMatch(/minIterations \(5\) is greater than filter.maxIterations \(1\)/);
    expect(code(await q('{ sessions(filter: { feedback: { name: "thumbs", min: 5, max: 1 } }) { totalCount } }'))).toBe('BAD_USER_INPUT');
    // A request without a query is the caller's mistake, and the answer says what to send.
    const empty = await fetch(`${api}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
      body: '{}',
    });
    const emptyBody = (await empty.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(emptyBody.errors.map((e) => e.extensions.code)).toEqual(['BAD_USER_INPUT']);
    expect(emptyBody.errors[0]!.message).toMatch(/no query/);
    const deep = `{ traces { nodes { ${'spans { spanId '.repeat(1)}} } } }`;
    expect((await q(deep)).errors).toBeUndefined();
    const aliases = `{ ${Array.from({ length: 60 }, (_, i) => `a${i}: traces { totalCount }`).join(' ')} }`;
    expect(code(await q(aliases))).toBe('QUERY_TOO_EXPENSIVE');
    // Each trace's spans (or analysis) on a page: a read per trace, so the page is capped.
    const spansOf = (first: number) => q(`{ traces(first: ${first}) { nodes { traceId spans { spanId } } } }`);
    const tooMany = await spansOf(200);
    expect(code(tooMany)).toBe('QUERY_TOO_EXPENSIVE');
    expect(tooMany.errors![0]!.message).toMatch(/at most 50 traces/);
    expect((await spansOf(50)).errors).toBeUndefined();
    expect(code(await q('{ traces(first: 200) { nodes { traceId durationMs costUsd } } }'))).toBeUndefined();
    // Aliases cannot multiply the cap: a request reads at most 200 traces' spans in all
    // (trace-reads.spec.ts); the same traces under many aliases are read once each.
    const pages = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `p${i}: traces(first: 50, filter: { minIterations: ${i} }) { nodes { spans { spanId } } }`).join(' ')} }`;
    const total = (await q<{ traces: { totalCount: number } }>('{ traces { totalCount } }')).data!.traces.totalCount;
    expect(total).toBeLessThan(50);
    expect((await q(pages(1))).errors).toBeUndefined();
    expect((await q(pages(20))).errors).toBeUndefined();
    // Times are DateTime: ISO-8601 with a zone, anything else refused with the value named.
    const badTime = await q('query($f: TraceFilter) { traces(filter: $f) { totalCount } }', { f: { from: 'yesterday' } });
    expect(code(badTime)).toBe('BAD_USER_INPUT');
    expect(badTime.errors![0]!.message).toContain('"yesterday"');
  });

  it('applies the ClickHouse limits the operator configured (QUERY_MAX_ROWS) to API queries', async () => {
    // The operator's limits, as the API reads them for each statement, set so a query may read only one row
    // (the project has a trace figure per trace sent); put back after.
    const limits = h.services.config.queryLimits;
    h.services.config.queryLimits = { ...limits, maxRowsToRead: 1 };
    try {
      const refused = await graphql(h.api, '{ traces { totalCount } }', {}, project.apiKey);
      expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_EXPENSIVE');
      expect(refused.errors?.[0]?.message).toMatch(/needs more than its limits allow; narrow the time range or filters/);
      const svg = await fetch(`${h.api}/v1/traces/${traces[0]!.spans[0]!.spanContext().traceId}/waterfall.svg`, {
        headers: { authorization: `Bearer ${project.apiKey}` },
      });
      expect(svg.status).toBe(422);
      expect(((await svg.json()) as { error: { code: string } }).error.code).toBe('QUERY_TOO_EXPENSIVE');
    } finally {
      h.services.config.queryLimits = limits;
    }
    // The API of the default limits answers the same query.
    expect((await q<{ traces: { totalCount: number } }>('{ traces { totalCount } }')).data!.traces.totalCount).toBeGreaterThanOrEqual(
      traces.length,
    );
  });

  it("speaks the contract's type names: TraceFilter, SessionFilter, DateTime times", async () => {
    const types = await q<{
      filter: { inputFields: Array<{ name: string; type: { name: string } }> };
      span: { fields: Array<{ name: string; type: { name: string | null; ofType: { name: string } | null } }> };
    }>(
      '{ filter: __type(name: "TraceFilter") { inputFields { name type { name } } } session: __type(name: "SessionFilter") { name } span: __type(name: "Span") { fields { name type { name ofType { name } } } } }',
    );
    expect(types.errors).toBeUndefined();
    expect(types.data!.filter.inputFields.filter((f) => f.name === 'from' || f.name === 'to').map((f) => f.type.name)).toEqual([
      'DateTime',
      'DateTime',
    ]);
    const typeOf = (name: string) => types.data!.span.fields.find((f) => f.name === name)!.type;
    expect([typeOf('startTime'), typeOf('endTime')].map((t) => t.name ?? t.ofType?.name)).toEqual(['DateTime', 'DateTime']);
    const page = await q<{ traces: { nodes: Array<{ startTime: string }> } }>('{ traces(first: 5) { nodes { startTime } } }');
    expect(page.data!.traces.nodes.length).toBeGreaterThan(0);
    for (const node of page.data!.traces.nodes) expect(node.startTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
