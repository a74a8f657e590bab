import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SpanRecorder, exportSpans, exportSucceeded, graphql, otlpExporter, type Transport } from '../support';
import { expectedCriticalPath, expectedTrace, recordAgentTrace } from './agent-trace';
import { startIngestHarness, type IngestHarness } from './ingest-harness';
import { sessionFigures, traceFigures } from './rollups';

/**
 * Ingest end to end with the real OpenTelemetry JS exporters as clients: what is stored, and the
 * per-trace and per-session rollups, checked against figures computed from the spans sent.
 */
describe('ingest through the real OpenTelemetry exporters', () => {
  let h: IngestHarness;
  beforeAll(async () => {
    h = await startIngestHarness();
  });
  afterAll(() => h.stop());

  const CALLS = [
    { model: 'gpt-4o-mini', provider: 'openai', input: 1_200, cacheRead: 400, output: 150 },
    { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 2_000, cacheRead: 0, output: 300, failed: true },
    { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', input: 2_100, cacheRead: 1_000, output: 280 },
  ];

  const cases: Array<[Transport, 'none' | 'gzip']> = [
    ['http/protobuf', 'none'],
    ['http/protobuf', 'gzip'],
    ['http/json', 'none'],
    ['http/json', 'gzip'],
    ['grpc', 'none'],
    ['grpc', 'gzip'],
  ];

  it.each(cases)('stores an agent trace sent over %s (compression %s) with its rollups', async (transport, compression) => {
    const project = await h.newProject();
    const recorder = new SpanRecorder('checkout-agent');
    recordAgentTrace(recorder, { session: `session-${transport}-${compression}`, calls: CALLS, start: Date.UTC(2026, 10, 2, 12) });
    const sent = recorder.finished();
    const expected = expectedTrace(sent);

    const exporter = otlpExporter(transport, { http: h.http, grpc: `http://${h.grpc}` }, project.apiKey, compression);
    const result = await exportSpans(exporter, sent);
    await exporter.shutdown();
    expect(exportSucceeded(result)).toBe(true);
    expect(await h.waitForSpans(project.projectId, sent.length)).toBe(sent.length);

    const stored = await h.query<{
      span_id: string;
      parent_span_id: string;
      name: string;
      span_type: string;
      status_code: string;
      model: string;
      session_id: string;
      service_name: string;
    }>(
      'SELECT span_id, parent_span_id, name, span_type, status_code, model, session_id, service_name FROM spans FINAL WHERE project_id = {p:String} ORDER BY span_id',
      { p: project.projectId },
    );
    const byId = new Map(stored.map((s) => [s.span_id, s]));
    for (const span of sent) {
      const row = byId.get(span.spanContext().spanId)!;
      expect(row).toMatchObject({
        name: span.name,
        parent_span_id: span.parentSpanContext?.spanId ?? '',
        service_name: 'checkout-agent',
        session_id: expected.session,
      });
      expect(row.status_code).toBe(span.status.code === 2 ? 'ERROR' : 'UNSET');
      const operation = span.attributes['gen_ai.operation.name'];
      const type = span.parentSpanContext ? { chat: 'LLM', invoke_agent: 'AGENT', execute_tool: 'TOOL' }[String(operation)] : 'RUN';
      expect(row.span_type).toBe(type);
      if (operation === 'chat') expect(row.model).toBe(span.attributes['gen_ai.response.model']);
    }

    const figures = (await traceFigures(h, project.projectId, expected.traceId))!;
    expect(figures.duration_ms).toBeCloseTo(expected.durationMs, 3);
    expect(figures.iterations).toBe(expected.iterations);
    expect(figures.input_tokens).toBe(expected.inputTokens);
    expect(figures.output_tokens).toBe(expected.outputTokens);
    expect(figures.cost_usd).toBeCloseTo(expected.costUsd, 9);
    expect(figures.cost_usd).toBeGreaterThan(0);
    expect(figures.error_count).toBe(expected.errorCount);
    expect(figures.llm_calls).toBe(expected.llmCalls);
    expect(figures.root_name).toBe('agent.run');

    const session = (await sessionFigures(h, project.projectId, expected.session))!;
    expect(session).toEqual({
      trace_count: 1,
      input_tokens: expected.inputTokens,
      output_tokens: expected.outputTokens,
      cost_usd: expect.closeTo(expected.costUsd, 9),
    });
  });

  it("takes the root's stated iterations over counting", async () => {
    const project = await h.newProject();
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 's-stated', calls: CALLS, start: Date.UTC(2026, 10, 2, 13), rootIterations: 7 });
    const sent = recorder.finished();
    expect(exportSucceeded(await exportSpans(otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey), sent))).toBe(
      true,
    );
    await h.waitForSpans(project.projectId, sent.length);
    expect((await traceFigures(h, project.projectId, expectedTrace(sent).traceId))!.iterations).toBe(7);
  });

  it('counts a span sent twice (an exporter retry) once in every figure', async () => {
    const project = await h.newProject();
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 's-dup', calls: CALLS, start: Date.UTC(2026, 10, 3) });
    const sent = recorder.finished();
    const expected = expectedTrace(sent);
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey);
    expect(exportSucceeded(await exportSpans(exporter, sent))).toBe(true);
    expect(exportSucceeded(await exportSpans(exporter, sent.slice(2)))).toBe(true);
    expect(exportSucceeded(await exportSpans(exporter, sent))).toBe(true);
    await h.waitForSpans(project.projectId, sent.length);
    // Let the duplicates land too before counting (the exporter may have sent a retried copy).
    await new Promise((r) => setTimeout(r, 800));
    const [{ n }] = await h.query<{ n: string }>('SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String}', {
      p: project.projectId,
    });
    expect(Number(n)).toBe(sent.length);
    const figures = (await traceFigures(h, project.projectId, expected.traceId))!;
    expect(figures).toMatchObject({
      input_tokens: expected.inputTokens,
      output_tokens: expected.outputTokens,
      error_count: expected.errorCount,
      llm_calls: expected.llmCalls,
      iterations: expected.iterations,
    });
    expect(figures.cost_usd).toBeCloseTo(expected.costUsd, 9);
    const session = (await sessionFigures(h, project.projectId, 's-dup'))!;
    expect(session.input_tokens).toBe(expected.inputTokens);
  });

  it('gives spans that arrive before their root the session of their trace', async () => {
    const project = await h.newProject();
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 's-late-root', calls: CALLS, start: Date.UTC(2026, 10, 4) });
    const sent = recorder.finished();
    const expected = expectedTrace(sent);
    const root = sent.filter((s) => !s.parentSpanContext);
    const children = sent.filter((s) => s.parentSpanContext);
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey);
    expect(exportSucceeded(await exportSpans(exporter, children))).toBe(true);
    await h.waitForSpans(project.projectId, children.length);
    expect(exportSucceeded(await exportSpans(exporter, root))).toBe(true);
    await h.waitForSpans(project.projectId, sent.length);
    const deadline = Date.now() + 10_000;
    let session = await sessionFigures(h, project.projectId, expected.session);
    while (session?.input_tokens !== expected.inputTokens && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      session = await sessionFigures(h, project.projectId, expected.session);
    }
    expect(session).toMatchObject({ trace_count: 1, input_tokens: expected.inputTokens, output_tokens: expected.outputTokens });
    const unattributed = await h.query<{ n: string }>(
      "SELECT count() AS n FROM spans FINAL WHERE project_id = {p:String} AND session_id = ''",
      { p: project.projectId },
    );
    expect(Number(unattributed[0]!.n)).toBe(0);
    // The sessions and traces pages: the session counts the children's usage once they are given
    // its session (the back-fill's round refreshes its figures), and the trace, whose figures that
    // back-fill does not change, is listed under the session with all of its usage.
    type Pages = {
      sessions: { nodes: Array<{ sessionId: string; traceCount: number; inputTokens: number; outputTokens: number; costUsd: number }> };
      traces: { nodes: Array<{ traceId: string; sessionId: string; inputTokens: number; costUsd: number }> };
    };
    const pages = async () => {
      const answer = await graphql<Pages>(
        h.api,
        '{ sessions(first: 5) { nodes { sessionId traceCount inputTokens outputTokens costUsd } } traces(first: 5) { nodes { traceId sessionId inputTokens costUsd } } }',
        {},
        project.apiKey,
      );
      expect(answer.errors).toBeUndefined();
      return answer.data!;
    };
    let shown = await pages();
    while (shown.sessions.nodes[0]?.inputTokens !== expected.inputTokens && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await pages();
    }
    expect(shown.sessions.nodes).toEqual([
      {
        sessionId: expected.session,
        traceCount: 1,
        inputTokens: expected.inputTokens,
        outputTokens: expected.outputTokens,
        costUsd: expect.closeTo(expected.costUsd, 9),
      },
    ]);
    expect(shown.traces.nodes).toEqual([
      {
        traceId: expected.traceId,
        sessionId: expected.session,
        inputTokens: expected.inputTokens,
        costUsd: expect.closeTo(expected.costUsd, 9),
      },
    ]);
  });

  it('ingests one trace of 10,000 spans whole', async () => {
    const project = await h.newProject();
    const recorder = new SpanRecorder();
    const start = Date.UTC(2026, 10, 5);
    const root = recorder.span(
      'batch.run',
      { 'session.id': 's-huge', 'gen_ai.operation.name': 'invoke_agent' },
      { start, end: start + 20_000 },
    );
    for (let i = 0; i < 9_999; i++) {
      const child = recorder.span(
        `execute_tool step-${i}`,
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': `tool-${i % 7}` },
        { start: start + i, end: start + i + 1 },
        root,
      );
      recorder.end(child);
    }
    recorder.end(root);
    const sent = recorder.finished();
    expect(sent).toHaveLength(10_000);
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey, 'gzip');
    for (let i = 0; i < sent.length; i += 512) expect(exportSucceeded(await exportSpans(exporter, sent.slice(i, i + 512)))).toBe(true);
    expect(await h.waitForSpans(project.projectId, 10_000, 60_000)).toBe(10_000);
    const [trace] = await h.query<{ traces: string; tools: string[] }>(
      'SELECT uniqExact(trace_id) AS traces, groupUniqArrayArray(tools_used) AS tools FROM traces WHERE project_id = {p:String}',
      { p: project.projectId },
    );
    expect(Number(trace!.traces)).toBe(1);
    expect([...trace!.tools].sort()).toEqual(Array.from({ length: 7 }, (_, i) => `tool-${i}`).sort());
    expect((await traceFigures(h, project.projectId, root.spanContext().traceId))!.duration_ms).toBe(20_000);
    // The whole tree through the API, without message contents, with its critical path.
    const api = h.api;
    const result = await graphql<{ trace: { spans: Array<{ spanId: string }>; criticalPath: Array<{ spanId: string }> } }>(
      api,
      'query($id: String!) { trace(traceId: $id) { spans { spanId parentSpanId type durationMs } criticalPath { spanId } } }',
      { id: root.spanContext().traceId },
      project.apiKey,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace.spans).toHaveLength(10_000);
    // The children run back to back, each starting as the one before ends: the critical-path
    // rule, computed from the spans sent, puts the root and every child on the path.
    const expectedPath = expectedCriticalPath(sent).map((s) => s.spanContext().spanId);
    expect(expectedPath).toHaveLength(10_000);
    expect(result.data!.trace.criticalPath.map((s) => s.spanId)).toEqual(expectedPath);
  });

  it("accepts the OTLP specification's example JSON", async () => {
    const project = await h.newProject();
    const body = readFileSync(path.join(ROOT, 'libs/otlp/src/fixtures/otlp-example-trace.json'), 'utf8');
    const spanCount = (JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> }).resourceSpans.flatMap(
      (r) => r.scopeSpans.flatMap((s) => s.spans),
    ).length;
    const response = await fetch(`${h.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${project.apiKey}` },
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({});
    expect(await h.waitForSpans(project.projectId, spanCount)).toBe(spanCount);
  });

  it('accounts received and accepted spans per project and minute', async () => {
    const project = await h.newProject();
    const recorder = new SpanRecorder();
    recordAgentTrace(recorder, { session: 's-acct', calls: CALLS, start: Date.UTC(2026, 10, 6) });
    const sent = recorder.finished();
    const exporter = otlpExporter('http/protobuf', { http: h.http, grpc: h.grpc }, project.apiKey);
    expect(exportSucceeded(await exportSpans(exporter, sent))).toBe(true);
    expect(exportSucceeded(await exportSpans(exporter, sent))).toBe(true);
    await h.waitForSpans(project.projectId, sent.length);
    const deadline = Date.now() + 10_000;
    let rows: Array<{ outcome: string; spans: string; requests: string }> = [];
    while (Date.now() < deadline) {
      rows = await h.query(
        'SELECT outcome, sum(spans) AS spans, sum(requests) AS requests FROM ingest_accounting FINAL WHERE project_id = {p:String} GROUP BY outcome ORDER BY outcome',
        { p: project.projectId },
      );
      if (rows.find((r) => r.outcome === 'accepted' && Number(r.requests) === 2)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.map((r) => [r.outcome, Number(r.spans), Number(r.requests)])).toEqual([
      ['accepted', 2 * sent.length, 2],
      ['received', 2 * sent.length, 2],
    ]);
  });
});
